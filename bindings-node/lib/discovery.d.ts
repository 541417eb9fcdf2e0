/**
 * One registered instance, as etcd has it.
 */
export type Instance = {
    /**
     * the instance's name: its key after `<service>/` (`name.toString()` for text)
     */
    name: Buffer;
    /**
     * what it registered (for Go gRPC clients: {@link grpcEndpoint}'s value)
     */
    value: Buffer;
    /**
     * the lease its key is on (0n for a key put without one, e.g. by hand)
     */
    lease: bigint;
    /**
     * the revision of the registration's latest put
     */
    modRevision: bigint;
};
/**
 * A service's instances at one revision.
 */
export type Instances = {
    /**
     * ordered by name (bytewise)
     */
    instances: Instance[];
    /**
     * the etcd revision this set is the state at
     */
    revision: bigint;
};
export type DiscoverOptions = {
    /**
     * aborting closes the discovery: a pending or later `next()`
     * rejects with an AbortError (so a `for await` loop throws it)
     */
    signal?: AbortSignal;
};
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
export class Discovery extends Follower implements AsyncIterableIterator<Instances> {
    /**
     * Not constructed directly: {@link Client#discover} returns one.
     * @private
     * @param {Promise<any>} nativeDiscovery
     * @param {AbortSignal | undefined} signal
     */
    private constructor();
    /**
     * The next set (the current one on the first call); done once closed or the client closed.
     * Rejects `CLOSED` if the client was closed before the discovery started, an AbortError once
     * its signal fired.
     * @returns {Promise<IteratorResult<Instances, undefined>>}
     */
    next(): Promise<IteratorResult<Instances, undefined>>;
}
/**
 * The value etcd's Go endpoints manager (`client/v3/naming/endpoints`) writes for a gRPC server
 * at `addr` (`{"Op":0,"Addr":"<addr>","Metadata":null}`): register it as an instance's value and
 * Go gRPC clients dialing `etcd:///<service>` (the `naming/resolver` package) reach it.
 * @param {string} addr `host:port`
 * @returns {string}
 */
export function grpcEndpoint(addr: string): string;
/**
 * The address in an endpoint value written by Go's endpoints manager or {@link grpcEndpoint}
 * (an {@link Instance}'s `value`), or null for any other value.
 * @param {Bytes} value
 * @returns {string | null}
 */
export function grpcEndpointAddr(value: Bytes): string | null;
import { Follower } from "./follower.js";
import type { Bytes } from './args.js';
