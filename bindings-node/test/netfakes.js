'use strict';
// Network fakes on 127.0.0.1 for the member-selection and cancellation tests: a member that
// accepts connections and never answers, one whose full accept queue drops every SYN, and a
// proxy that holds back one HTTP/2 request's body (and can reset that request's stream).
const net = require('node:net');
const { spawn } = require('node:child_process');

/** A listener that accepts connections and never reads or writes a byte; counts them. */
async function silentListener() {
  const held = new Set();
  const server = net.createServer((sock) => {
    sock.on('error', () => {});
    sock.on('close', () => held.delete(sock));
    held.add(sock);
    s.accepted++;
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const s = {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    accepted: 0,
    close() {
      for (const sock of held) sock.destroy();
      server.close();
    },
  };
  return s;
}

// A socket listening with backlog 0 and never accepting, its queue filled until a connect no
// longer completes; prints its port, then waits until its stdin closes.
const UNACCEPTING = `
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fillers = []
for _ in range(8):
    c = socket.socket(); c.settimeout(0.3)
    try:
        c.connect(("127.0.0.1", port)); fillers.append(c)
    except OSError:
        break
else:
    sys.exit("the accept queue of a backlog-0 socket never filled")
print(port, flush=True)
sys.stdin.read()
`;

/** A listener whose full accept queue drops every SYN (a python3 process; killed by close()). */
function unacceptingListener() {
  const child = spawn('python3', ['-c', UNACCEPTING], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error('no port from the helper in 10 s'))), 10_000);
    child.on('exit', (code) => reject(new Error(`helper exited with ${code}`)));
    child.stdout.once('data', (d) => {
      clearTimeout(timer);
      resolve({ endpoint: `http://127.0.0.1:${parseInt(d.toString(), 10)}`, close: () => child.kill('SIGKILL') });
    });
  });
}

const PREFACE = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
const DATA = 0;
const RST_STREAM = 3;
const CANCEL = 8; // an RST_STREAM error code

/** An RST_STREAM frame for stream `sid`. */
function rstStream(sid, code = CANCEL) {
  const f = Buffer.alloc(13);
  f.writeUIntBE(4, 0, 3);
  f[3] = RST_STREAM;
  f.writeUInt32BE(sid, 5);
  f.writeUInt32BE(code, 9);
  return f;
}

/** Calls `onFrame` with each whole HTTP/2 frame read from `sock` (after `skip` preface bytes). */
function readFrames(sock, skip, onPreface, onFrame) {
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    if (skip > 0) {
      if (buf.length < skip) return;
      onPreface(buf.subarray(0, skip));
      buf = buf.subarray(skip);
      skip = 0;
    }
    while (buf.length >= 9 && buf.length >= 9 + buf.readUIntBE(0, 3)) {
      const frame = buf.subarray(0, 9 + buf.readUIntBE(0, 3));
      buf = buf.subarray(frame.length);
      onFrame(frame);
    }
  });
}

/**
 * A TCP proxy to 127.0.0.1:`port` that reads the HTTP/2 frames the client sends. `hold(marker)`
 * arms it: the next request whose body (a DATA frame) contains `marker` is held — its headers
 * already went through, so etcd waits for the body — while everything else passes, including
 * later requests on the same connection. `release()` sends the held body on; the request's
 * RST_STREAM (the client gave up on it) is dropped, as if lost in the network. So the request
 * lands after whatever the client sent meanwhile. `resetHeld()` instead resets the held
 * request's stream: RST_STREAM (CANCEL) to the client, as if etcd had reset it, and to etcd,
 * which never gets the body; the stream's later frames are dropped. etcd's replies are read
 * frame by frame too (its side starts with a frame, no preface), so that a frame the proxy
 * makes up never lands inside one of etcd's.
 */
async function holdProxy(port) {
  let marker = null;
  /** @type {{ up: net.Socket, client: net.Socket, sid: number, frames: Buffer[], released: boolean, reset: boolean } | null} */
  let held = null;
  const socks = new Set();
  const server = net.createServer((client) => {
    const up = net.connect(port, '127.0.0.1');
    for (const s of [client, up]) {
      socks.add(s);
      s.on('error', () => {});
      s.on('close', () => (socks.delete(s), client.destroy(), up.destroy()));
    }
    // Whole frames only, so that resetHeld() can write one of its own in between.
    readFrames(up, 0, null, (frame) => client.write(frame));
    readFrames(
      client,
      PREFACE,
      (preface) => up.write(preface),
      (frame) => {
        const type = frame[3];
        const sid = frame.readUInt32BE(5) & 0x7fffffff;
        if (marker && held === null && type === DATA && frame.includes(marker)) {
          held = { up, client, sid, frames: [], released: false, reset: false };
          marker = null;
        }
        if (held && held.up === up && held.sid === sid && sid !== 0) {
          if (held.reset) return;
          if (!held.released && type !== RST_STREAM) held.frames.push(frame);
          if (!held.released || type === RST_STREAM) return;
        }
        up.write(frame);
      },
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    hold(m) {
      marker = Buffer.from(m);
    },
    /** Whether a request is being held. */
    get holding() {
      return held !== null && !held.released;
    },
    /** Sends the held request's frames on; returns how many. */
    release() {
      if (!held || held.released) return 0;
      held.released = true;
      for (const f of held.frames) held.up.write(f);
      return held.frames.length;
    },
    /** Resets the held request's stream (RST_STREAM both ways); returns its ID (0: none held). */
    resetHeld() {
      if (!held || held.released) return 0;
      held.released = held.reset = true;
      held.up.write(rstStream(held.sid));
      held.client.write(rstStream(held.sid));
      return held.sid;
    },
    close() {
      for (const s of socks) s.destroy();
      server.close();
    },
  };
}

module.exports = { silentListener, unacceptingListener, holdProxy };
