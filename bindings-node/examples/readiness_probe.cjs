// A Kubernetes readiness probe for a leader-elected worker: GET /readyz answers 200 while this
// process leads (health().ok) and 503 otherwise, so a Service routes only to the leader.
//   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 PORT=8080 ELECTION=jobs/leader node readiness_probe.cjs
'use strict';
const http = require('node:http');
const { Client } = require('etcdlock');

async function main() {
  const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379' });
  const leadership = await client.election(process.env.ELECTION || 'jobs/leader', { ttl: Number(process.env.TTL || 10) }).campaign(process.env.HOSTNAME || 'me');
  const server = http.createServer((req, res) => {
    if (req.url !== '/readyz') return res.writeHead(404).end();
    const h = leadership.health(); // local reads only: cheap enough for every probe
    res.writeHead(h.ok ? 200 : 503, { 'content-type': 'text/plain' });
    res.end(`${h.state} ${h.lostReason ?? ''} token=${h.fencingToken}\n`);
  });
  server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
    console.log(`listening ${server.address().port}`);
    console.log(`leading ${leadership.fencingToken}`);
  });
  // The leader's work runs here; on loss it stops at once. The probe now says 503: the pod is not
  // broken (liveness stays fine), it is just not the leader.
  leadership.onLost((reason) => console.log(`lost (${reason}): not ready`));
  process.once('SIGTERM', async () => {
    server.close();
    await client.close();
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
