// Upload memory benchmark: starts `./builder serve` as its own process, streams a generated 1 GiB body
// to it (PUT raw, then POST multipart), samples the server's resident memory from /proc every 100 ms,
// and checks the stored object's sha256 against the one computed while sending. Prints figures; asserts nothing.
//   node --import tsx bench/ingest/upload-memory.ts [--mb 1024]
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const i = process.argv.indexOf("--mb");
const MB = i > 0 ? Number(process.argv[i + 1]) : 1024;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-upload-"));
const env = { ...process.env, BUILDER_DATA_DIR: dataDir, LOG_LEVEL: "warn", DATABASE_URL: "", GCS_BUCKET: "" };

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

const rssMb = (pid: number, field = "VmRSS") => {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
};

function send(
  port: number,
  key: string,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  parts: { head?: Buffer; tail?: Buffer },
) {
  return new Promise<{ status: number; body: string; sha256: string; seconds: number }>((resolve, reject) => {
    const chunk = randomBytes(1024 * 1024);
    const hash = createHash("sha256");
    const bodyLen = MB * chunk.length + (parts.head?.length ?? 0) + (parts.tail?.length ?? 0);
    const t0 = Date.now();
    const req = http.request({
      host: "127.0.0.1",
      port,
      method,
      path: urlPath,
      headers: { authorization: `Bearer ${key}`, "content-length": String(bodyLen), ...headers },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, sha256: hash.digest("hex"), seconds: (Date.now() - t0) / 1000 }));
    });
    req.on("error", reject);
    let sent = 0;
    const pump = () => {
      while (sent < MB) {
        // Each MiB differs (its first bytes carry the counter), so the object is not one block repeated.
        chunk.writeUInt32LE(sent, 0);
        hash.update(chunk);
        sent++;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (parts.tail) req.write(parts.tail);
      req.end();
    };
    if (parts.head) req.write(parts.head);
    pump();
  });
}

async function main() {
  const builder = path.join(root, "builder");
  execFileSync(builder, ["users", "create", "--email", "bench@example.org", "--password", "bench-password-123"], {
    env,
    cwd: root,
    stdio: "ignore",
  });
  const key = execFileSync(builder, ["keys", "create", "--email", "bench@example.org"], { env, cwd: root, encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  const port = await freePort();
  const server = spawn(builder, ["serve"], {
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (let t = 0; ; t++) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (t > 300) throw new Error("the server did not start");
      await new Promise((r) => setTimeout(r, 200));
    }
    const me = (await (await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      user_id: string;
    };
    const pid = server.pid!;
    console.log(`server pid ${pid}; body ${MB} MiB; ${os.cpus().length} CPU; other work may share the machine`);
    for (const kind of ["put", "multipart"] as const) {
      await fetch(`http://127.0.0.1:${port}/v1/files/${me.user_id}/warm/w.zip`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}` },
        body: "warm-up",
      });
      const before = rssMb(pid);
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
      const boundary = `----bench${randomBytes(8).toString("hex")}`;
      const r =
        kind === "put"
          ? await send(port, key, "PUT", `/v1/files/${me.user_id}/bench/big.zip`, { "content-type": "application/zip" }, {})
          : await send(
              port,
              key,
              "POST",
              "/v1/files",
              { "content-type": `multipart/form-data; boundary=${boundary}` },
              {
                head: Buffer.from(
                  `--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\nbench/big-multipart.zip\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.zip"\r\nContent-Type: application/zip\r\n\r\n`,
                ),
                tail: Buffer.from(`\r\n--${boundary}--\r\n`),
              },
            );
      clearInterval(timer);
      const answer = JSON.parse(r.body);
      const stored = path.join(dataDir, "bucket", answer.zip_gcloud);
      const storedSha = await hashFile(stored);
      console.log(
        JSON.stringify({
          kind,
          status: r.status,
          mib: MB,
          seconds: r.seconds,
          mib_per_s: Math.round(MB / r.seconds),
          server_rss_before_mb: before,
          server_rss_peak_mb: peak,
          server_rss_growth_mb: peak - before,
          sha256_sent_equals_answer: answer.sha256 === r.sha256,
          sha256_stored_equals_sent: storedSha === r.sha256,
        }),
      );
      fs.rmSync(stored, { force: true });
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function hashFile(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const c of fs.createReadStream(file)) h.update(c as Buffer);
  return h.digest("hex");
}

await main();
