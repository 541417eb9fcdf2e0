'use strict';
// The errors the API throws and rejects with: EtcdlockError (a stable `code`, one of `codes`)
// and AbortError, and the conversion of the native side's rejections.

/**
 * Every `code` an {@link EtcdlockError} can carry (core's closed set of error kinds).
 * @readonly
 */
const codes = Object.freeze({
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'UNAVAILABLE',
  LOCK_TIMEOUT: 'LOCK_TIMEOUT',
  TIMEOUT: 'TIMEOUT',
  WOULD_BLOCK: 'WOULD_BLOCK',
  LOCK_LOST: 'LOCK_LOST',
  NOT_HELD: 'NOT_HELD',
  COMPACTED: 'COMPACTED',
  CLOSED: 'CLOSED',
  AUTH: 'AUTH',
  WRONG_CONTEXT: 'WRONG_CONTEXT',
  INTERNAL: 'INTERNAL',
});
const CODE_SET = new Set(Object.values(codes));

/** @typedef {keyof typeof codes} ErrorCode */

/** An error from etcdlock; `code` is one of {@link codes}. */
class EtcdlockError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ compactRevision?: bigint }} [extra]
   */
  constructor(code, message, extra) {
    super(message);
    this.name = 'EtcdlockError';
    /** One of {@link codes}. @type {ErrorCode} */
    this.code = /** @type {ErrorCode} */ (code);
    /** For `COMPACTED`: the oldest revision etcd still has. @type {bigint | undefined} */
    this.compactRevision = extra && extra.compactRevision;
  }
}

/** Rejection of an acquire whose AbortSignal fired (`name === 'AbortError'`). */
class AbortError extends Error {
  /**
   * @param {string} [message]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message = 'The operation was aborted', options) {
    super(message, options);
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
  }
}

/** @param {string} message */
function invalid(message) {
  return new EtcdlockError(codes.INVALID_ARGUMENT, message);
}

/** Re-creates a native rejection as an EtcdlockError (with a stack through the caller). */
function fromNative(e) {
  if (e && typeof e.code === 'string' && CODE_SET.has(e.code)) {
    return new EtcdlockError(e.code, e.message, { compactRevision: e.compactRevision });
  }
  return e;
}

/** @param {AbortSignal} signal @param {string} [what] */
function abortError(signal, what = 'The lock acquisition') {
  return new AbortError(`${what} was aborted`, { cause: signal.reason });
}

module.exports = { codes, EtcdlockError, AbortError, invalid, fromNative, abortError };
