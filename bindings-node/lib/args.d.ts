/**
 * Keys, values and names: a string (UTF-8) or bytes.
 */
export type Bytes = string | Uint8Array;
/**
 * PEM text: a string, or its bytes (as `tls.connect` takes `ca`, `cert` and `key`).
 */
export type Pem = string | Uint8Array;
/** Lock TTL in seconds when `lock()` is not given one. */
export const DEFAULT_LOCK_TTL: 10;
/**
 * The most permits a semaphore may have (1024, the core's `MAX_PERMITS`).
 * @type {number}
 */
export const MAX_PERMITS: number;
export function describe(v: any): string;
/**
 * Keys, values and names: a string (UTF-8) or bytes.
 * @typedef {string | Uint8Array} Bytes
 */
/** @param {unknown} v @param {string} what @returns {Buffer} */
export function toBytes(v: unknown, what: string): Buffer;
/** @param {unknown} o @param {string} what @returns {Record<string, any>} */
export function toOptions(o: unknown, what: string): Record<string, any>;
/** Positive whole seconds. */
export function toTtl(v: any, what: any): number;
/** Milliseconds >= 0; undefined/null/Infinity mean "no limit" (returns undefined). */
export function toMillis(v: any, what: any): number;
/** A 64-bit revision: bigint, or a number that is an exact integer (<= 2^53 - 1). */
export function toRevision(v: any, what: any): bigint;
export function toSignal(v: any): any;
/** The `tls` option for the native side: PEM as bytes; the PEM itself is checked by core. */
export function toTls(v: any): {
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    serverName?: string;
};
/** A semaphore's permit count (or `count`, the permits one acquisition takes): a whole number from 1 to MAX_PERMITS. */
export function toPermits(v: any, what?: string): number;
/**
 * An acquire's `timeout`, `signal` and `value` (as `lock()` takes them). `fixed` names the
 * options that belong to the handle instead (`ttl` of `client.rwlock()`, `value` of
 * `campaign(value)`): giving them here would be silently ignored, so it is INVALID_ARGUMENT.
 * @param {Record<string, any>} o
 * @param {string[]} fixed
 * @param {string} where
 */
export function acquireOptions(o: Record<string, any>, fixed: string[], where: string): {
    timeout: number;
    signal: any;
    value: Buffer<ArrayBufferLike>;
};
/** Name and TTL of a handle made synchronously (`client.election()`, `client.rwlock()`), checked as core checks a lock's. */
export function checkHandle(name: any, options: any): {
    n: Buffer<ArrayBuffer>;
    ttl: number;
};
/** An optional boolean option (absent: false). */
export function toFlag(v: any, what: any): boolean;
export function toCallback(v: any): any;
/**
 * The native client's connect options from `new Client(options)`'s (see ClientOptions).
 * @param {unknown} options
 */
export function toConnectOptions(options: unknown): {
    endpoints: string[];
    connectTimeoutMs: number;
    requestTimeoutMs: number;
};
