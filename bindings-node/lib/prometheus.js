'use strict';
// `require('etcdlock/prometheus')`: clients' metrics in a prom-client registry. Needs the
// optional peer dependency prom-client (`npm install prom-client`); `require('etcdlock')` never
// loads this module.
//
// Each family (`etcdlock_lock_acquisitions_total`, `etcdlock_lock_wait_seconds` ..., the names,
// help and types of `client.metricsText()`) is one metric object of the registry, shared by all
// the clients registered there and read from each of them when the registry is scraped
// (`register.metrics()`), each series labelled `client="<client.name>"`. prom-client refuses a
// second metric of one name, so the families are registered once per registry, with the first
// client, and unregistered with the last.

/** @import { Client } from './client.js' */

const { Registry, register: defaultRegistry } = require('prom-client');
const { Client: EtcdClient } = require('./client.js');
const internal = require('./internal.js');
const { invalid } = require('./errors.js');

/**
 * @typedef {object} FamilyValue
 * @property {number} value
 * @property {Record<string, string | number>} labels
 * @property {string} [metricName]
 */

/** @typedef {{ clients: Map<string, Client>, names: string[] }} Registered */

/** @type {WeakMap<Registry, Registered>} */
const perRegistry = new WeakMap();

/**
 * One family's prom-client metric object: what `Registry.registerMetric` takes (a name, help,
 * type and an async `get()`), its values read from every client of `state` at each scrape.
 * @param {any} first the family's metric item (its name, help and kind)
 * @param {Registered} state
 */
function family(first, state) {
  const type = first.kind === 'labeled' ? 'counter' : first.kind;
  const name = first.prometheus;
  const help = first.help;
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    async get() {
      /** @type {FamilyValue[]} */
      const values = [];
      for (const client of state.clients.values()) {
        const it = internal.metricItems(client).find((/** @type {any} */ i) => i.prometheus === name);
        if (!it) continue;
        const labels = { client: client.name };
        if (it.kind === 'labeled') {
          for (const [l, n] of it.labels) values.push({ value: n, labels: { ...labels, [it.label]: l } });
        } else if (it.kind === 'histogram') {
          for (const [le, n] of it.buckets) values.push({ metricName: `${name}_bucket`, value: n, labels: { ...labels, le } });
          values.push({ metricName: `${name}_bucket`, value: it.count, labels: { ...labels, le: '+Inf' } });
          values.push({ metricName: `${name}_sum`, value: it.sum, labels });
          values.push({ metricName: `${name}_count`, value: it.count, labels });
        } else {
          values.push({ value: it.value, labels });
        }
      }
      return { name, help, type, values, aggregator: 'sum' };
    },
    reset() {},
  };
}

/**
 * Adds `client`'s metrics to `registry` (default: prom-client's global `register`). Throws
 * `INVALID_ARGUMENT` if a client of the same name is registered there already (its series would
 * be the same), or if the registry has a metric of an etcdlock family name that is not ours.
 * @param {Client} client
 * @param {Registry} [registry]
 */
function register(client, registry = defaultRegistry) {
  if (!(client instanceof EtcdClient)) throw invalid('client must be an etcdlock Client');
  if (!(registry instanceof Registry)) throw invalid('registry must be a prom-client Registry');
  let state = perRegistry.get(registry);
  if (state && state.clients.has(client.name)) throw invalid(`a client named ${JSON.stringify(client.name)} is registered already`);
  if (!state) {
    const items = internal.metricItems(client);
    /** @type {Registered} */
    const fresh = { clients: new Map(), names: items.map((/** @type {any} */ i) => i.prometheus) };
    const taken = fresh.names.filter((n) => registry.getSingleMetric(n));
    if (taken.length) throw invalid(`the registry has metrics named ${taken.join(', ')} already`);
    for (const it of items) registry.registerMetric(/** @type {any} */ (family(it, fresh)));
    perRegistry.set(registry, (state = fresh));
  }
  state.clients.set(client.name, client);
}

/**
 * Takes `client`'s metrics out of `registry` (the families go with the last client). Throws
 * `INVALID_ARGUMENT` if it was not registered there.
 * @param {Client} client
 * @param {Registry} [registry]
 */
function unregister(client, registry = defaultRegistry) {
  const state = perRegistry.get(registry);
  if (!state || state.clients.get(client.name) !== client) throw invalid(`client ${JSON.stringify(client.name)} is not registered`);
  state.clients.delete(client.name);
  if (state.clients.size === 0) {
    for (const n of state.names) registry.removeSingleMetric(n);
    perRegistry.delete(registry);
  }
}

module.exports = { register, unregister };
