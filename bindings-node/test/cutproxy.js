'use strict';
// A TCP proxy on 127.0.0.1 that can cut its clients off from etcd (the Node twin of
// bindings-python/tests/cutproxy.py): `cut()` closes every connection through it and closes each
// new one at once, until `restore()`. For tests of what a client does when it hears nothing for a
// while (its watches resume, or find the history they need compacted).
const net = require('node:net');

/** A proxy to 127.0.0.1:`port`, listening on a free port: `{ endpoint, cut(), restore(), close() }`. */
async function cutProxy(port) {
  let cut = false;
  const socks = new Set();
  const server = net.createServer((client) => {
    client.on('error', () => {});
    if (cut) {
      client.destroy();
      return;
    }
    const up = net.connect(port, '127.0.0.1');
    for (const s of [client, up]) {
      socks.add(s);
      s.setNoDelay(true);
      s.on('error', () => {});
      s.on('close', () => (socks.delete(s), client.destroy(), up.destroy()));
    }
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const closeAll = () => {
    for (const s of socks) s.destroy();
  };
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    /** Closes every connection; new ones are closed at once until `restore()`. */
    cut() {
      cut = true;
      closeAll();
    },
    restore() {
      cut = false;
    },
    close() {
      closeAll();
      server.close();
    },
  };
}

module.exports = { cutProxy };
