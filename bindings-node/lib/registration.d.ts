/**
 * Why a registration was lost (it is being registered again by then).
 */
export type RegistrationLostReason = "expired" | "revoked" | "key_deleted";
export type RegisterOptions = {
    /**
     * lease TTL in whole seconds (default 10): how long the instance stays
     * listed after this process stops without closing it
     */
    ttl?: number;
    /**
     * take the name over if another registrant holds it (whose
     * registration then ends with 'takenOver'); without it that is `WOULD_BLOCK`
     */
    replace?: boolean;
    /**
     * aborting while registering rejects with an AbortError and
     * leaves nothing; aborting later closes the registration (as `server.listen({ signal })` closes
     * a server)
     */
    signal?: AbortSignal;
};
/**
 * Why a registration was lost (it is being registered again by then).
 * @typedef {'expired' | 'revoked' | 'key_deleted'} RegistrationLostReason
 */
/**
 * @typedef {object} RegisterOptions
 * @property {number} [ttl] lease TTL in whole seconds (default 10): how long the instance stays
 *   listed after this process stops without closing it
 * @property {boolean} [replace] take the name over if another registrant holds it (whose
 *   registration then ends with 'takenOver'); without it that is `WOULD_BLOCK`
 * @property {AbortSignal} [signal] aborting while registering rejects with an AbortError and
 *   leaves nothing; aborting later closes the registration (as `server.listen({ signal })` closes
 *   a server)
 */
/**
 * An instance registered under a service, from {@link Client#register}: the key
 * `<service>/<instance>` with its value, on a lease of its own that the core keeps alive. When
 * the registration is lost (the lease expired or was revoked, the key deleted), the core
 * registers it again on a new lease as soon as etcd allows, and reports both
 * ({@link Registration#onLost}, {@link Registration#onRestored}); another registrant taking the
 * name over (`replace: true`) ends it ({@link Registration#onTakenOver}). `close()` (or
 * `await using`) deregisters. Like a held lock it does not keep the process alive, garbage
 * collection never closes it, and closing its client or exiting the process deregisters it.
 */
export class Registration {
    /**
     * Not constructed directly: {@link Client#register} returns one.
     * @private
     * @param {any} nativeRegistration
     * @param {Client} client
     * @param {AbortSignal | undefined} signal
     */
    private constructor();
    /** `<service>/<instance>`, the key in etcd. */
    get key(): Buffer<ArrayBuffer>;
    /**
     * The lease the key is on now; null while it is being registered again, once taken over and
     * once closed. A new one after each restore.
     * @type {bigint | null}
     */
    get leaseId(): bigint | null;
    /**
     * Whether the instance is registered now, as far as this process knows (cheap, local): false
     * while being registered again, once taken over, once closed.
     * @type {boolean}
     */
    get registered(): boolean;
    /**
     * Calls `cb(reason)` on the JS thread each time the registration is lost from now on
     * ('expired', 'revoked', 'key_deleted'); the core is registering it again by then, and
     * {@link Registration#onRestored} follows (unless the name was taken over meanwhile). Not
     * called for `close()`. Returns a function that removes `cb`.
     * @param {(reason: RegistrationLostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: RegistrationLostReason) => void): () => void;
    /**
     * Calls `cb(leaseId)` on the JS thread each time the instance is registered again after a
     * loss, with the new lease's ID. Returns a function that removes `cb`.
     * @param {(leaseId: bigint) => void} cb
     * @returns {() => void}
     */
    onRestored(cb: (leaseId: bigint) => void): () => void;
    /**
     * Calls `cb()` once, on the JS thread, when another registrant takes the name over: the
     * registration has ended (its key is the other's; `update()` rejects `NOT_HELD`); at once
     * (asynchronously) if it already was. Returns a function that removes `cb`.
     * @param {() => void} cb
     * @returns {() => void}
     */
    onTakenOver(cb: () => void): () => void;
    /**
     * Replaces the registered value (kept for every later re-registration too). Written only
     * while the key is on this registration's lease: rejects `NOT_HELD`, writing nothing, while
     * it is being registered again (the value is then used when it is), once taken over or closed.
     * @param {Bytes} value at most 4096 bytes
     * @returns {Promise<bigint>} the revision of the write
     */
    update(value: Bytes): Promise<bigint>;
    /**
     * Deregisters: stops keeping it, deletes the key if it is still this registration's (a
     * taker's stays) and revokes the lease, both done when this resolves (if etcd is unreachable
     * the lease expires after its TTL at worst). Idempotent; resolves at once after the client
     * was closed, which deregistered it already.
     * @returns {Promise<void>}
     */
    close(): Promise<void>;
    /** `await using reg = await client.register(...)` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
import type { Bytes } from './args.js';
