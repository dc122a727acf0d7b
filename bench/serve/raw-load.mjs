// A load client for /predict that allocates nothing per answer: HTTP/1.1 keep-alive over node:net, each connection
// reading into one reused buffer (net's `onread`), each answer counted, not kept. Why: a client that allocates every
// ~600 KB image answer runs V8 mark-compacts every few dozen requests, and each one lands in some request's measured
// latency. Against a server that answers 501 KB at once without work (client-floor.ts), undici's arrayBuffer() client
// (http-load.ts until 2026-11-25) measured p99 10.9-12.9 ms for a 0.7-0.8 ms median; the peer's load.mjs (http chunks
// + Buffer.concat) 3.3-4.9 ms for 0.9-1.2 ms; this one 1.4-4.5 ms for 0.6 ms; Python's http.client 1.4-2.3 ms for
// 0.5-0.6 ms (bench/serve/notebook/README.md, "the load client's own tail").
//
// Two uses:
//   - imported by http-load.ts (bench/serve/run.ts's client): `runLoad(job, onStarted)`;
//   - `node raw-load.mjs` speaks ../shared/peer-fastapi/load.mjs's protocol on stdin/stdout (JSON lines: a job, or
//     {"once": true, ...} for one request whose text is returned, or {"exit": true}), so vs-peer.ts --client raw can
//     give it to the peer's own bench.py in place of load.mjs, for both servers alike.
import net from "node:net";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const RECV_BYTES = 1 << 20;
const HEAD_BYTES = 64 * 1024;
const KEEP_BYTES = 256; // the start of each answer, for error messages
const CRLF2 = Buffer.from("\r\n\r\n");

/** The bytes of one request, built once per job and written as they are for every request. */
export function requestBytes(job) {
  const u = new URL(job.url);
  const body = Buffer.from(job.body);
  const head =
    `POST ${job.path} HTTP/1.1\r\nhost: ${u.host}\r\nauthorization: Bearer ${job.key}\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/** One keep-alive connection: `send(bytes, keepAll)` resolves with {status, bytes, text} when the answer ends. */
class Connection {
  constructor(url) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.recv = Buffer.allocUnsafe(RECV_BYTES);
    this.head = Buffer.allocUnsafe(HEAD_BYTES);
    this.keep = Buffer.allocUnsafe(KEEP_BYTES);
    this.socket = null;
    this.pending = null;
  }

  connect() {
    this.socket = net.connect({
      host: this.host,
      port: this.port,
      noDelay: true,
      onread: {
        buffer: this.recv,
        callback: (n, buf) => {
          this.onBytes(buf, n);
        },
      },
    });
    this.socket.on("error", (err) => this.fail(err));
    this.socket.on("close", () => {
      this.socket = null;
      this.fail(new Error("connection closed"));
    });
  }

  send(bytes, keepAll = false) {
    if (!this.socket) this.connect();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, keepAll, parts: keepAll ? [] : null };
      this.state = "head";
      this.headLen = 0;
      this.keepLen = 0;
      this.bytes = 0;
      this.socket.write(bytes);
    });
  }

  fail(err) {
    const p = this.pending;
    this.pending = null;
    if (p) p.reject(err);
  }

  onBytes(buf, n) {
    let i = 0;
    while (i < n && this.pending) {
      if (this.state === "head") i = this.readHead(buf, i, n);
      else if (this.state === "length") i = this.readBody(buf, i, Math.min(n, i + this.left));
      else i = this.readChunked(buf, i, n);
    }
  }

  readHead(buf, i, n) {
    const take = Math.min(n - i, HEAD_BYTES - this.headLen);
    if (take === 0) {
      this.fail(new Error("answer headers over 64 KB"));
      return n;
    }
    buf.copy(this.head, this.headLen, i, i + take);
    const from = Math.max(0, this.headLen - 3);
    this.headLen += take;
    const end = this.head.indexOf(CRLF2, from);
    if (end < 0 || end + 4 > this.headLen) return i + take;
    const text = this.head.toString("latin1", 0, end);
    this.status = Number(text.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
    this.chunked = /\r\ntransfer-encoding:\s*chunked/i.test(text);
    const used = end + 4 - (this.headLen - take); // bytes of this read that were headers
    if (this.chunked) {
      this.state = "size";
      this.line = "";
    } else if (length) {
      this.state = "length";
      this.left = Number(length[1]);
      if (this.left === 0) this.done();
    } else {
      this.fail(new Error("answer with neither content-length nor chunked encoding"));
      return n;
    }
    return i + used;
  }

  /** Counts (and, for `once`, keeps) the body bytes buf[i..end) of a content-length answer. */
  readBody(buf, i, end) {
    this.take(buf, i, end);
    this.left -= end - i;
    if (this.left === 0) this.done();
    return end;
  }

  readChunked(buf, i, n) {
    if (this.state === "size" || this.state === "crlf" || this.state === "trailer") {
      while (i < n) {
        const c = buf[i++];
        if (c !== 10) {
          if (c !== 13) this.line += String.fromCharCode(c);
          continue;
        }
        const line = this.line;
        this.line = "";
        if (this.state === "crlf") {
          this.state = "size";
          continue;
        }
        if (this.state === "trailer") {
          if (line === "") {
            this.done();
            return i;
          }
          continue;
        }
        this.left = parseInt(line, 16);
        this.state = this.left === 0 ? "trailer" : "data";
        return i;
      }
      return i;
    }
    const end = Math.min(n, i + this.left);
    this.take(buf, i, end);
    this.left -= end - i;
    if (this.left === 0) this.state = "crlf";
    return end;
  }

  take(buf, i, end) {
    this.bytes += end - i;
    if (this.keepLen < KEEP_BYTES) {
      const k = Math.min(end - i, KEEP_BYTES - this.keepLen);
      buf.copy(this.keep, this.keepLen, i, i + k);
      this.keepLen += k;
    }
    if (this.pending.keepAll) this.pending.parts.push(Buffer.from(buf.subarray(i, end)));
  }

  done() {
    const p = this.pending;
    this.pending = null;
    const text = p.keepAll ? Buffer.concat(p.parts).toString("utf8") : this.keep.toString("utf8", 0, this.keepLen);
    p.resolve({ status: this.status, bytes: this.bytes, text });
  }

  close() {
    this.socket?.destroy();
  }
}

const pools = new Map();

function connections(url, count) {
  let pool = pools.get(url);
  if (!pool) pools.set(url, (pool = []));
  while (pool.length < count) pool.push(new Connection(url));
  return pool.slice(0, count);
}

/** One request whose whole answer text is returned (the correctness check). */
export async function once(job) {
  const [conn] = connections(job.url, 1);
  const r = await conn.send(requestBytes(job), true);
  return { status: r.status, text: r.text };
}

/**
 * `concurrency` closed loops for `seconds` after `warmup` seconds; onStarted() when timing begins. Returns
 * {latencies, starts (epoch ms of each timed request), errors, firstError, seconds, bytes (mean answer size),
 * cpuMs (this client process's CPU over the timed part, user + system: its share of the kernel's loopback work too)}.
 */
export async function runLoad(job, onStarted = () => {}) {
  const bytes = requestBytes(job);
  const conns = connections(job.url, job.concurrency);
  let errors = 0,
    firstError,
    nBytes = 0;
  const one = async (conn) => {
    const r = await conn.send(bytes);
    if (r.status !== 201) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
    return r.bytes;
  };
  const warmEnd = performance.now() + (job.warmup ?? 1) * 1000;
  await Promise.all(
    conns.map(async (c) => {
      while (performance.now() < warmEnd) await one(c).catch(() => undefined);
    }),
  );
  onStarted();
  const cpu0 = process.cpuUsage();
  const latencies = [];
  const starts = [];
  const t0 = performance.now();
  const end = t0 + job.seconds * 1000;
  await Promise.all(
    conns.map(async (c) => {
      while (performance.now() < end) {
        const s = performance.now();
        try {
          nBytes += await one(c);
          latencies.push(performance.now() - s);
          starts.push(performance.timeOrigin + s);
        } catch (err) {
          errors++;
          firstError ??= err.message;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    latencies,
    starts,
    errors,
    firstError,
    seconds,
    bytes: latencies.length ? nBytes / latencies.length : 0,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

export function closeAll() {
  for (const pool of pools.values()) for (const c of pool) c.close();
  pools.clear();
}

// As a program: ../shared/peer-fastapi/load.mjs's stdin/stdout protocol.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const job = JSON.parse(line);
    if (job.exit) break;
    if (job.once) out({ type: "once", ...(await once(job)) });
    else {
      const { starts: _, ...r } = await runLoad(job, () => out({ type: "started" }));
      out({ type: "done", ...r });
    }
  }
  closeAll();
  process.exit(0);
}
