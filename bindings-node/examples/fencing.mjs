// ES module: database access control: the database refuses a late write from a lock holder that no longer holds; run with ETCDLOCK_ENDPOINTS set (and better-sqlite3 installed).
import { Client } from 'etcdlock';
import { sqlite as fence, StaleFence } from 'etcdlock/fencing';
import Database from 'better-sqlite3';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });
const db = new Database(':memory:');
fence.install(db); // CREATE TABLE IF NOT EXISTS etcdlock_fence
db.exec('CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER); INSERT INTO accounts VALUES (7, 100)');

// One transaction: the fence check first (it raises the lock's mark), then the writes.
const debit = db.transaction((f, amount) => {
  fence.check(db, f); // StaleFence (code NOT_HELD) if a newer holder has written
  db.prepare('UPDATE accounts SET balance = balance - ? WHERE id = 7').run(amount);
});

const first = await client.lock('readme/accounts/7');
const old = await first.fence(); // the lock's name, the fencing token, the etcd cluster's ID
debit.immediate(old, 5);
debit.immediate(String(old), 5); // the same holder again (>=); the string form, e.g. from a header
console.log(`first holder's fence holds: ${await client.checkFence(old)}`);
await first.release();

const second = await client.lock('readme/accounts/7');
debit.immediate(await second.fence(), 10); // the next holder raises the mark
await second.release();

try {
  debit.immediate(old, 1000); // the first holder, late (say it was paused past its lease)
} catch (e) {
  if (!(e instanceof StaleFence)) throw e;
  console.log(`late write refused: ${e.code}`);
}
console.log(`first holder's fence holds: ${await client.checkFence(old)}`);
console.log(`balance: ${db.prepare('SELECT balance FROM accounts').get().balance}`);
await client.close();
