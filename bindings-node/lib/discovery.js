'use strict';
// A service's instances as etcd has them (the service registry's reading side), and the
// endpoint values of Go's gRPC resolver.

/** @import { Bytes } from './args.js' */

const native = require('./addon.js');
const { invalid } = require('./errors.js');
const { describe, toBytes } = require('./args.js');
const { Follower } = require('./follower.js');

/**
 * One registered instance, as etcd has it.
 * @typedef {object} Instance
 * @property {Buffer} name the instance's name: its key after `<service>/` (`name.toString()` for text)
 * @property {Buffer} value what it registered (for Go gRPC clients: {@link grpcEndpoint}'s value)
 * @property {bigint} lease the lease its key is on (0n for a key put without one, e.g. by hand)
 * @property {bigint} modRevision the revision of the registration's latest put
 */

/**
 * A service's instances at one revision.
 * @typedef {object} Instances
 * @property {Instance[]} instances ordered by name (bytewise)
 * @property {bigint} revision the etcd revision this set is the state at
 */

/**
 * @typedef {object} DiscoverOptions
 * @property {AbortSignal} [signal] aborting closes the discovery: a pending or later `next()`
 *   rejects with an AbortError (so a `for await` loop throws it)
 */

/**
 * A service's instance sets, from {@link Client#discover}: `for await (const set of
 * discovery)`, each an {@link Instances} — the current set first, then the whole set after each
 * change (changes that arrive together come as one set; every set is the state at its
 * `revision`), across reconnects and compaction. Ends when closed (`close()`, leaving the loop)
 * or when the client closes; a pending `next()` keeps the process alive, as an iterated watch
 * does. Sends nothing until iterated.
 * @implements {AsyncIterableIterator<Instances>}
 */
class Discovery extends Follower {
  /**
   * Not constructed directly: {@link Client#discover} returns one.
   * @private
   * @param {Promise<any>} nativeDiscovery
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeDiscovery, signal) {
    super(nativeDiscovery, (set) => set, signal, 'The discovery');
  }

  /**
   * The next set (the current one on the first call); done once closed or the client closed.
   * Rejects `CLOSED` if the client was closed before the discovery started, an AbortError once
   * its signal fired.
   * @returns {Promise<IteratorResult<Instances, undefined>>}
   */
  next() {
    return super.next();
  }
}

/**
 * The value etcd's Go endpoints manager (`client/v3/naming/endpoints`) writes for a gRPC server
 * at `addr` (`{"Op":0,"Addr":"<addr>","Metadata":null}`): register it as an instance's value and
 * Go gRPC clients dialing `etcd:///<service>` (the `naming/resolver` package) reach it.
 * @param {string} addr `host:port`
 * @returns {string}
 */
function grpcEndpoint(addr) {
  if (typeof addr !== 'string') throw invalid(`addr must be a string (host:port), got ${describe(addr)}`);
  return native.grpcEndpoint(addr);
}

/**
 * The address in an endpoint value written by Go's endpoints manager or {@link grpcEndpoint}
 * (an {@link Instance}'s `value`), or null for any other value.
 * @param {Bytes} value
 * @returns {string | null}
 */
function grpcEndpointAddr(value) {
  return native.grpcEndpointAddr(toBytes(value, 'value')) ?? null;
}

module.exports = { Discovery, grpcEndpoint, grpcEndpointAddr };
