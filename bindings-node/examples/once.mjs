// ES module: a job run at most once per period, whichever hosts trigger it; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });
const HOUR = 3_600_000;

// What a cron entry on every host runs. The period's slot is the hour boundary nearest to `at`
// (default: now), so hosts whose clocks differ by under 30 minutes pick the same one.
async function hourlyReport(host, at, fail = false) {
  const slot = await client.once('readme/reports/hourly', { every: HOUR, at });
  const hour = new Date(Math.round(at / HOUR) * HOUR).toISOString().slice(11, 16);
  if (slot === null) return console.log(`${host}: the ${hour} report is done, or running elsewhere`);
  // The claim lives on this client's lease (TTL 10 s, kept alive while the job runs): if this
  // process dies, the next trigger in the period runs the job.
  try {
    if (fail) throw new Error('mail server down');
    // ... the job (its writes fenced: client.put(key, value, { ifHeld: slot })) ...
    await slot.done(); // later triggers in this period do nothing
    console.log(`${host}: sent the ${hour} report (slot ${slot.slot})`);
  } catch (e) {
    await slot.release(); // the job failed: the next trigger in this period runs it
    console.log(`${host}: the ${hour} report failed (${e.message}), released`);
  }
}

const nine = Date.parse('2030-01-07T09:00:00Z');
const min = 60_000;
await hourlyReport('host-a', nine - 29 * min, true); // a clock 29 minutes behind: the 09:00 slot
await hourlyReport('host-b', nine + 1 * min);
await hourlyReport('host-c', nine + 28 * min);
await hourlyReport('host-a', nine + 59 * min); // the 10:00 slot

// Done marks expire by themselves after `keepPeriods` periods (default 3); deleted here so
// that this example can run again at once.
for (const s of [nine / HOUR, nine / HOUR + 1]) await client.delete(`readme/reports/hourly/done/${s}`);
await client.close();
