'use strict';
// The `onLost` callbacks of a lock or a lease.

const { toCallback } = require('./args.js');

/**
 * Calls each callback once with the reason; shared by Lock and Lease. The native forwarder runs
 * on the JS thread and never keeps the process alive.
 */
class LostCallbacks {
  constructor(subscribe) {
    this.subscribe = subscribe;
    /** @type {Set<Function> | null} */
    this.callbacks = null;
    /** @type {string | null} */
    this.reason = null;
  }

  add(cb) {
    toCallback(cb);
    if (this.reason !== null) {
      // Already fired: this callback still gets it once, asynchronously like the others.
      const reason = this.reason;
      let live = true;
      setImmediate(() => live && cb(reason));
      return () => {
        live = false;
      };
    }
    if (this.callbacks === null) {
      this.callbacks = new Set();
      this.subscribe((reason) => {
        this.reason = reason;
        const cbs = this.callbacks;
        this.callbacks = new Set();
        for (const f of cbs) f(reason);
      });
    }
    this.callbacks.add(cb);
    return () => {
      if (this.callbacks) this.callbacks.delete(cb);
    };
  }
}

/** @typedef {'expired' | 'revoked' | 'key_deleted' | 'closed'} LostReason */

module.exports = { LostCallbacks };
