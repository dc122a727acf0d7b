import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { BucketLimitError, BucketNotFoundError, objectPathSegments, type Bucket, downloadObject } from "./bucket.js";

/** Hashes and counts bytes on their way through; aborts past maxBytes. */
export function meter(maxBytes = Infinity) {
  const hash = createHash("sha256");
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) return cb(new BucketLimitError(maxBytes));
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest("hex") }) };
}

/** A folder as a bucket. Objects are written to a temp file in the same folder, then renamed. */
export class LocalBucket implements Bucket {
  readonly kind = "local" as const;
  constructor(
    private readonly root: string,
    readonly name = "local",
  ) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  }

  private file(objectPath: string): string {
    return path.join(this.root, ...objectPathSegments(objectPath));
  }

  async write(objectPath: string, body: Readable, opts: { maxBytes?: number } = {}) {
    const target = this.file(objectPath);
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const tmp = `${target}.${randomBytes(6).toString("hex")}.partial`;
    const m = meter(opts.maxBytes);
    // Owner-only: uploads are patients' data, not for the host's other accounts.
    const file = fs.createWriteStream(tmp, { flags: "wx", mode: 0o600 });
    try {
      await pipeline(body, m.stream, file);
      await fs.promises.rename(tmp, target);
    } catch (err) {
      // pipeline rejects as soon as one stream fails (a body that is not a zip fails on its first bytes), maybe
      // before the write stream has opened, i.e. created, its file: wait for it to close so that the removal
      // cannot run ahead of the file's creation and leave a .partial behind.
      if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    return m.result();
  }

  async uploadFile(localFile: string, objectPath: string) {
    return this.write(objectPath, fs.createReadStream(localFile));
  }

  async read(objectPath: string): Promise<Readable> {
    const file = this.file(objectPath);
    try {
      const handle = await fs.promises.open(file, "r");
      return handle.createReadStream();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "EISDIR") {
        throw new BucketNotFoundError(objectPath);
      }
      throw err;
    }
  }

  downloadTo(objectPath: string, localFile: string) {
    return downloadObject(this, objectPath, localFile);
  }

  async stat(objectPath: string) {
    const file = this.file(objectPath); // an unsafe path throws, as on every other call
    try {
      const st = await fs.promises.stat(file);
      return st.isFile() ? { size: st.size } : null;
    } catch {
      return null;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const base = prefix.replace(/\/+$/, "");
    const dir = base ? this.file(base) : this.root;
    const out: string[] = [];
    const walk = async (d: string, rel: string) => {
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(d, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(path.join(d, e.name), r);
        else if (e.isFile() && !e.name.endsWith(".partial")) out.push(r);
      }
    };
    await walk(dir, base);
    return out.sort();
  }

  async delete(objectPath: string) {
    await fs.promises.rm(this.file(objectPath), { force: true });
  }

  async removeEmptyFolders(prefix: string) {
    const base = prefix.replace(/\/+$/, "");
    if (!base) return;
    // rmdir removes only an empty folder: a folder that still holds anything (another upload) is kept, and so
    // are the folders above it. First the empty folders below the prefix, deepest first, then up to the root.
    const below = async (dir: string): Promise<void> => {
      const entries = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) if (e.isDirectory()) await below(path.join(dir, e.name));
      await fs.promises.rmdir(dir).catch(() => undefined);
    };
    await below(this.file(base));
    for (let dir = path.dirname(this.file(base)); dir.startsWith(this.root + path.sep); dir = path.dirname(dir)) {
      try {
        await fs.promises.rmdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") return;
      }
    }
  }
}
