'use strict';
// The library's events (a lock lost, a lease expired, a stream reopened; each acquisition and
// release at debug level), published on diagnostics_channel and, with NODE_DEBUG=etcdlock,
// written to stderr by util.debuglog. The core hands each event to the native side, which
// passes it to this environment's thread through a weak threadsafe function (it never keeps the
// process alive); nothing is published while a channel has no subscribers.

const dc = require('node:diagnostics_channel');
const util = require('node:util');

/** Channel names, one per area. */
const channels = Object.freeze({
  lock: 'etcdlock:lock',
  lease: 'etcdlock:lease',
  watch: 'etcdlock:watch',
  connection: 'etcdlock:connection',
});
const byArea = new Map(Object.entries(channels).map(([area, name]) => [area, dc.channel(name)]));
const debuglog = util.debuglog('etcdlock');

/**
 * One published message.
 * @typedef {object} LogMessage
 * @property {'error' | 'warn' | 'info' | 'debug' | 'trace'} level
 * @property {'lock' | 'lease' | 'watch' | 'connection'} area
 * @property {string} message The event's fixed text, e.g. 'lock lost: it may be held by another client now'.
 * @property {Record<string, string | number | boolean>} fields e.g. `lock`, `token`, `reason`, `held_ms`.
 */

/**
 * @param {{ level: string, area: string, message: string, text: string,
 *   fields: { key: string, text: string, number?: number | null, flag?: boolean | null }[] }} e
 */
function publish(e) {
  const ch = byArea.get(e.area) || byArea.get('connection');
  if (ch.hasSubscribers) {
    /** @type {Record<string, string | number | boolean>} */
    const fields = {};
    for (const f of e.fields) fields[f.key] = f.number ?? f.flag ?? f.text;
    ch.publish({ level: e.level, area: e.area, message: e.message, fields });
  }
  if (debuglog.enabled) debuglog('%s %s: %s', e.level.toUpperCase(), e.area, e.text);
}

let id = 0;
let debug = false;

/** Starts the bridge for this environment (once; the wrapper calls it when it loads). */
function start(/** @type {any} */ native) {
  if (id === 0) id = native.initLog(publish);
  refresh(native);
}

/** Asks for debug-level events while someone listens; called at connect and each lock(). */
function refresh(/** @type {any} */ native) {
  let wanted = debuglog.enabled;
  for (const ch of byArea.values()) wanted = wanted || ch.hasSubscribers;
  if (id !== 0 && wanted !== debug) {
    debug = wanted;
    native.setLogDebug(id, wanted);
  }
}

module.exports = { channels, start, refresh };
