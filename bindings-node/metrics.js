'use strict';
// A client's metrics as one object: the core's list (`Metrics::entries()`, the same names in
// every binding) with camel-case keys. No I/O: the numbers are counters in memory.

/** @param {string} name */
const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/**
 * @param {Array<{ name: string, kind: string, value?: number | null, labels?: Array<[string, number]> | null,
 *   count?: number | null, sum?: number | null, buckets?: Array<[number, number]> | null }>} items
 * @returns {Record<string, any>} lib/types.js's `Metrics`
 */
function toMetrics(items) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const it of items) {
    if (it.kind === 'labeled') out[camel(it.name)] = Object.fromEntries(it.labels || []);
    else if (it.kind === 'histogram') out[camel(it.name)] = { count: it.count, sum: it.sum, buckets: it.buckets };
    else out[camel(it.name)] = it.value;
  }
  return out;
}

module.exports = { toMetrics };
