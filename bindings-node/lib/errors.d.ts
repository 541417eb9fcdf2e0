export type ErrorCode = keyof typeof codes;
/**
 * Every `code` an {@link EtcdlockError} can carry (core's closed set of error kinds).
 * @readonly
 */
export const codes: Readonly<{
    INVALID_ARGUMENT: "INVALID_ARGUMENT";
    UNAVAILABLE: "UNAVAILABLE";
    LOCK_TIMEOUT: "LOCK_TIMEOUT";
    TIMEOUT: "TIMEOUT";
    WOULD_BLOCK: "WOULD_BLOCK";
    LOCK_LOST: "LOCK_LOST";
    NOT_HELD: "NOT_HELD";
    COMPACTED: "COMPACTED";
    CLOSED: "CLOSED";
    AUTH: "AUTH";
    WRONG_CONTEXT: "WRONG_CONTEXT";
    INTERNAL: "INTERNAL";
}>;
/** @typedef {keyof typeof codes} ErrorCode */
/** An error from etcdlock; `code` is one of {@link codes}. */
export class EtcdlockError extends Error {
    /**
     * @param {string} code
     * @param {string} message
     * @param {{ compactRevision?: bigint }} [extra]
     */
    constructor(code: string, message: string, extra?: {
        compactRevision?: bigint;
    });
    /** One of {@link codes}. @type {ErrorCode} */
    code: ErrorCode;
    /** For `COMPACTED`: the oldest revision etcd still has. @type {bigint | undefined} */
    compactRevision: bigint | undefined;
}
/** Rejection of an acquire whose AbortSignal fired (`name === 'AbortError'`). */
export class AbortError extends Error {
    /**
     * @param {string} [message]
     * @param {{ cause?: unknown }} [options]
     */
    constructor(message?: string, options?: {
        cause?: unknown;
    });
    code: string;
}
/** @param {string} message */
export function invalid(message: string): EtcdlockError;
/** Re-creates a native rejection as an EtcdlockError (with a stack through the caller). */
export function fromNative(e: any): any;
/** @param {AbortSignal} signal @param {string} [what] */
export function abortError(signal: AbortSignal, what?: string): AbortError;
