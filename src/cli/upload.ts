import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Command } from "commander";

// ./builder upload FILE.zip --to EXPERIMENT_DIR --key KEY [--url URL]
// Streams the file with PUT /v1/files/<user_id>/<experiment_dir>/<file>.zip (the user id comes from
// GET /v1/me), shows a progress bar on stderr, and checks the server's sha256 against its own.

export interface UploadOptions {
  file: string;
  to: string;
  key: string;
  url: string;
  /** Object file name; defaults to the local file's name. */
  name?: string;
  onProgress?: (sent: number, total: number) => void;
}

export interface UploadOutcome {
  zip_gcloud: string;
  size: number;
  sha256: string;
  converted_from?: string;
  note?: string;
}

export class UploadError extends Error {}

function request(url: URL, opts: http.RequestOptions): http.ClientRequest {
  return (url.protocol === "https:" ? https : http).request(url, opts);
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("error", reject);
  });
}

function errorText(status: number, body: string): string {
  try {
    const e = (JSON.parse(body) as { error: { code: string; message: string } }).error;
    return `${status} ${e.code}: ${e.message}`;
  } catch {
    return `${status}: ${body.slice(0, 200)}`;
  }
}

async function whoAmI(base: string, key: string): Promise<string> {
  const req = request(new URL("/v1/me", base), { method: "GET", headers: { authorization: `Bearer ${key}` } });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => req.on("response", resolve).on("error", reject).end());
  const body = await readBody(res);
  if (res.statusCode !== 200) throw new UploadError(`cannot identify the key's user: ${errorText(res.statusCode ?? 0, body)}`);
  return (JSON.parse(body) as { user_id: string }).user_id;
}

export async function uploadFile(opts: UploadOptions): Promise<UploadOutcome> {
  const st = await fs.promises.stat(opts.file).catch(() => null);
  if (!st?.isFile()) throw new UploadError(`no file at ${opts.file}`);
  const name = opts.name ?? path.basename(opts.file);
  if (!/\.(zip|csv|xlsx)$/i.test(name)) throw new UploadError(`${name} is not a .zip file (or a data task's table: .csv or .xlsx)`);
  const userId = await whoAmI(opts.url, opts.key);
  const target = new URL(`/v1/files/${encodeURIComponent(userId)}/${encodeURIComponent(opts.to)}/${encodeURIComponent(name)}`, opts.url);
  const hash = createHash("sha256");
  let sent = 0;
  const progress = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      sent += chunk.length;
      hash.update(chunk);
      opts.onProgress?.(sent, st.size);
      cb(null, chunk);
    },
  });
  // Expect: 100-continue lets the server refuse (413 over the limit) before the body is sent, instead of closing
  // the socket under a half-sent file. A server or proxy that never answers 100 gets the body after a second.
  const req = request(target, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${opts.key}`,
      "content-type": contentTypeOf(name),
      "content-length": String(st.size),
      expect: "100-continue",
    },
  });
  let sending: Promise<unknown> | undefined;
  const send = () => {
    // The server may still answer early and close: the response is what matters then, not the pipe.
    sending ??= pipeline(fs.createReadStream(opts.file), progress, req).catch(() => undefined);
  };
  const fallback = setTimeout(send, 1000);
  req.once("continue", send);
  const response = new Promise<http.IncomingMessage>((resolve, reject) => req.on("response", resolve).on("error", reject));
  const res = await response.finally(() => clearTimeout(fallback));
  const body = await readBody(res);
  if (sending) await sending;
  else req.destroy(); // answered before any byte was sent
  if (res.statusCode !== 201) throw new UploadError(`upload refused: ${errorText(res.statusCode ?? 0, body)}`);
  const out = JSON.parse(body) as UploadOutcome;
  const local = hash.digest("hex");
  // A bare table comes back as the zip the server made of it: its hash is that zip's, not the sent file's.
  if (!out.converted_from && (out.sha256 !== local || out.size !== st.size)) {
    throw new UploadError(`the stored file differs from the local one (sha256 ${out.sha256} vs ${local}); upload it again`);
  }
  return out;
}

function contentTypeOf(name: string): string {
  if (/\.csv$/i.test(name)) return "text/csv";
  if (/\.xlsx$/i.test(name)) return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
  return "application/zip";
}

function human(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/** A progress bar for stderr: redrawn in place on a terminal, a line per 10% otherwise (logs, CI). */
export function progressBar(stream: NodeJS.WriteStream = process.stderr, width = 30) {
  const start = Date.now();
  let lastTenth = -1;
  let lastDraw = 0;
  return (sent: number, total: number) => {
    const frac = total ? sent / total : 1;
    const now = Date.now();
    const rate = sent / Math.max((now - start) / 1000, 0.001);
    const line = `[${"#".repeat(Math.round(frac * width)).padEnd(width, "-")}] ${(frac * 100).toFixed(0).padStart(3)}% ${human(sent)} / ${human(total)} ${human(rate)}/s`;
    if (stream.isTTY) {
      if (now - lastDraw < 100 && sent < total) return;
      lastDraw = now;
      stream.write(`\r${line}${sent >= total ? "\n" : ""}`);
    } else if (Math.floor(frac * 10) > lastTenth) {
      lastTenth = Math.floor(frac * 10);
      stream.write(`${line}\n`);
    }
  };
}

export function registerUpload(program: Command): void {
  program
    .command("upload")
    .description(
      "upload a dataset zip (or a data task's .csv/.xlsx table, stored as a zip of it) to your folder in the bucket; prints {zip_gcloud, size, sha256}",
    )
    .argument("<file>", "the .zip file, or a .csv/.xlsx table")
    .requiredOption("--to <experiment_dir>", "folder for this experiment's data, e.g. exp1")
    .option("--key <key>", "your API key (or BUILDER_API_KEY)")
    .option("--url <url>", "Builder's address (or BUILDER_URL)", process.env.BUILDER_URL ?? `http://localhost:${process.env.PORT ?? 8080}`)
    .option("--name <file.zip>", "name to store it under (default: the file's name)")
    .action(async (file: string, opts: { to: string; key?: string; url: string; name?: string }) => {
      const key = opts.key ?? process.env.BUILDER_API_KEY;
      if (!key) {
        process.stderr.write("error: give your API key with --key or BUILDER_API_KEY\n");
        process.exit(2);
      }
      try {
        const out = await uploadFile({ file, to: opts.to, key, url: opts.url, name: opts.name, onProgress: progressBar() });
        process.stdout.write(`${JSON.stringify(out)}\n`);
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}
