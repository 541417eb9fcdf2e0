/**
 * The states of a native follower as an async iterator: the current state first, then one per
 * change, across reconnects and compaction; ends when closed (`close()`, leaving a `for await`
 * loop, the signal if it has one) or when the client closes. Reads the native follower one
 * `next()` at a time, in the order they were called. Not used directly: the election's `Observer`
 * and the `Discovery` extend it, each declaring the type its `next()` yields (not as a type
 * argument: `Leader | null` would lose its null in the generated declarations).
 * @implements {AsyncIterableIterator<any>}
 */
export class Follower implements AsyncIterableIterator<any> {
    /**
     * @protected
     * @param {Promise<any>} nativeFollower resolves to the native object (`next()`, `close()`)
     * @param {(item: any) => unknown} map what `next()` yields for a native item (never null)
     * @param {AbortSignal | undefined} signal aborting closes it: a pending or later `next()` rejects with an AbortError
     * @param {string} what names it in the AbortError's message (`<what> was aborted`)
     */
    protected constructor();
    /**
     * The next state (the current one on the first call); done once closed or the client closed.
     * Rejects `CLOSED` if the client was closed before it started, an AbortError once its signal
     * fired.
     * @returns {Promise<IteratorResult<any, undefined>>}
     */
    next(): Promise<IteratorResult<any, undefined>>;
    /**
     * Ends a `for await` loop early: closes it.
     * @returns {Promise<IteratorReturnResult<undefined>>}
     */
    return(): Promise<IteratorReturnResult<undefined>>;
    /** Stops following (its watch is closed); a pending `next()` resolves done. Idempotent. */
    close(): void;
    [Symbol.asyncIterator](): this;
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
