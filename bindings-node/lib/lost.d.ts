export type LostReason = "expired" | "revoked" | "key_deleted" | "closed";
/**
 * Calls each callback once with the reason; shared by Lock and Lease. The native forwarder runs
 * on the JS thread and never keeps the process alive.
 */
export class LostCallbacks {
    constructor(subscribe: any);
    subscribe: any;
    /** @type {Set<Function> | null} */
    callbacks: Set<Function> | null;
    /** @type {string | null} */
    reason: string | null;
    add(cb: any): () => void;
}
