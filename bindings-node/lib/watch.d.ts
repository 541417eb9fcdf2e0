/**
 * One change seen by a watch.
 */
export type WatchEvent = {
    type: "put" | "delete";
    key: Buffer;
    /**
     * empty for deletes
     */
    value: Buffer;
    /**
     * the revision of this change
     */
    revision: bigint;
    createRevision: bigint;
    version: bigint;
    /**
     * 0n when none
     */
    lease: bigint;
    /**
     * with `prevKv: true`
     */
    prevValue?: Buffer;
};
export type WatchOptions = {
    /**
     * watch every key that starts with `key`
     */
    prefix?: boolean;
    /**
     * first revision to deliver (default: changes from now on)
     */
    startRevision?: bigint | number;
    /**
     * include each event's previous value as `prevValue`
     */
    prevKv?: boolean;
};
/**
 * One change seen by a watch.
 * @typedef {object} WatchEvent
 * @property {'put' | 'delete'} type
 * @property {Buffer} key
 * @property {Buffer} value empty for deletes
 * @property {bigint} revision the revision of this change
 * @property {bigint} createRevision
 * @property {bigint} version
 * @property {bigint} lease 0n when none
 * @property {Buffer} [prevValue] with `prevKv: true`
 */
/**
 * A watch from {@link Client#watch}: an async iterable of {@link WatchEvent}s that resumes
 * across disconnects without gaps or duplicates. Ends when closed; throws `COMPACTED` if the
 * history it needs is gone, `CLOSED` if the client is closed.
 * @implements {AsyncIterableIterator<WatchEvent>}
 */
export class Watch implements AsyncIterableIterator<WatchEvent> {
    /**
     * Not constructed directly: {@link Client#watch} returns one.
     * @private
     * @param {Promise<any>} nativeWatch
     */
    private constructor();
    /**
     * Resolves once etcd has confirmed the watch: without `startRevision`, every change made after
     * this resolves is delivered. Rejects if the watch could not be created (errors met later,
     * such as `COMPACTED` for a `startRevision` etcd no longer has, come from `next()`).
     * @returns {Promise<void>}
     */
    get ready(): Promise<void>;
    /** @returns {Promise<IteratorResult<WatchEvent, undefined>>} */
    next(): Promise<IteratorResult<WatchEvent, undefined>>;
    /**
     * Ends a `for await` loop early: closes the watch.
     * @returns {Promise<IteratorReturnResult<undefined>>}
     */
    return(): Promise<IteratorReturnResult<undefined>>;
    /** Stops the watch; a pending `next()` resolves done. Idempotent. */
    close(): void;
    [Symbol.asyncIterator](): this;
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
