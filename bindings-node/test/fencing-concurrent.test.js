'use strict';
// FENCE-CONCURRENT-001 in Node: 8 node-postgres connections under READ COMMITTED write tokens of
// one resource through `etcdlock/fencing`'s pg helper at once, on a real PostgreSQL (test/pg.js).
// What the database committed, in the order it committed it, is read back from the table.
const test = require('node:test');
const assert = require('node:assert/strict');
const { prefix, etcdctl } = require('./helpers');
const { Fence, StaleFence } = require('..');
const fencing = require('etcdlock/fencing');
const pgDriver = require('pg');
const { startPostgres } = require('./pg');

const pgConfig = startPostgres();

/** The etcd cluster's ID, as etcdctl reports it (its digits: JSON.parse would round it). */
function clusterId() {
  const m = /"cluster_id":(\d+)/.exec(etcdctl('get', 'x', '-w', 'json'));
  assert.ok(m, 'no cluster_id in etcdctl output');
  return BigInt(m[1]);
}

// covers: FENCE-CONCURRENT-001
test('8 writers under READ COMMITTED never commit a stale token: every write committed or refused, tokens never go back in commit order', async (t) => {
  const setup = new pgDriver.Client(pgConfig);
  await setup.connect();
  t.after(() => setup.end());
  await fencing.pg.install(setup);
  // seq is taken by the INSERT, after the check, while the mark's row is locked: commit order.
  await setup.query('CREATE TABLE busy (seq BIGSERIAL PRIMARY KEY, resource TEXT, writer TEXT, token BIGINT)');
  const name = prefix('fence-busy');
  const cluster = clusterId();
  const tokens = Array.from({ length: 40 }, (_, i) => 100n + BigInt(i));
  const committed = [];
  const refused = [];
  const conns = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const c = new pgDriver.Client(pgConfig);
      await c.connect();
      return c;
    }),
  );
  t.after(() => Promise.all(conns.map((c) => c.end())));
  const writer = async (db, w) => {
    for (let k = w; k < tokens.length; k += 8) {
      const token = tokens[k];
      await db.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      try {
        await fencing.pg.check(db, new Fence('q', Buffer.from(name), token, cluster));
        // A window between the check and the commit for the others to race into.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
        await db.query('INSERT INTO busy (resource, writer, token) VALUES ($1, $2, $3)', [name, `w${w}`, token.toString()]);
        await db.query('COMMIT');
        committed.push(token);
      } catch (e) {
        await db.query('ROLLBACK');
        if (!(e instanceof StaleFence)) throw e;
        refused.push(token);
      }
    }
  };
  await Promise.all(conns.map((db, w) => writer(db, w)));
  assert.equal(committed.length + refused.length, tokens.length, 'a write was neither committed nor refused');
  const rows = await setup.query('SELECT token FROM busy WHERE resource = $1 ORDER BY seq', [name]);
  const inOrder = rows.rows.map((r) => BigInt(r.token));
  const byValue = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  assert.deepEqual([...inOrder].sort(byValue), [...committed].sort(byValue), 'the table holds other writes than those committed');
  assert.deepEqual(inOrder, [...inOrder].sort(byValue), `a stale token committed after a newer one: ${inOrder.join(' ')}`);
  assert.ok(committed.includes(tokens[tokens.length - 1]), 'the newest token was refused');
  t.diagnostic(`${committed.length} committed, ${refused.length} refused`);
});
