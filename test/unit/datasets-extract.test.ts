import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { extractZip, type ExtractLimits } from "../../src/datasets/extract.js";
import { DatasetFault } from "../../src/datasets/report.js";
import { makeZip, type ZipEntryOptions } from "../helpers/zips.js";

const limits: ExtractLimits = { maxEntries: 100, maxUncompressedBytes: 100 * 1024 * 1024, maxCompressionRatio: 200 };

/** Extracts into <tmp>/work and returns what happened plus everything that exists under <tmp>. */
async function attempt(entries: Record<string, Buffer | string>, opts: Record<string, ZipEntryOptions> = {}, lim = limits) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "extract-"));
  const zipFile = path.join(base, "in.zip");
  fs.writeFileSync(zipFile, makeZip(entries, opts));
  const work = path.join(base, "work");
  let error: DatasetFault | null = null;
  let result = null;
  try {
    result = await extractZip(zipFile, work, lim);
  } catch (err) {
    if (!(err instanceof DatasetFault)) throw err;
    error = err;
  }
  const written = (fs.readdirSync(base, { recursive: true }) as string[]).filter((f) => f !== "in.zip").sort();
  return { error, result, written, base };
}

describe("extractZip", () => {
  it("extracts files, skips OS clutter, and finds the one top-level folder", async () => {
    const { result, error } = await attempt({
      "ds/a.csv": "x",
      "ds/img/b.png": "y",
      "__MACOSX/ds/._a.csv": "junk",
      "ds/.DS_Store": "junk",
    });
    expect(error).toBeNull();
    expect(result!.files).toEqual(["ds/a.csv", "ds/img/b.png"]);
    expect(result!.topLevelFolder).toBe("ds");
    expect(result!.skipped).toBe(2);
    expect(fs.readFileSync(path.join(result!.dir, "ds/img/b.png"), "utf8")).toBe("y");
  });

  it.each([
    ["zip-slip '..'", { "ok.csv": "a", "../../evil.txt": "owned" }, {}, "zip_unsafe_path"],
    ["absolute path", { "/tmp/evil.txt": "owned" }, {}, "zip_unsafe_path"],
    ["windows drive path", { "C:/evil.txt": "owned" }, {}, "zip_unsafe_path"],
    ["backslash traversal", { "..\\evil.txt": "owned" }, {}, "zip_unsafe_path"],
    ["symlink", { link: "/etc/passwd" }, { link: { unixMode: 0o120777 } }, "zip_symlink"],
    ["encrypted entry", { "secret.csv": "a,b" }, { "secret.csv": { encryptedFlag: true } }, "zip_encrypted"],
  ] as const)("refuses a %s without writing anything", async (_name, entries, opts, code) => {
    const { error, written } = await attempt(entries as Record<string, string>, opts as Record<string, ZipEntryOptions>);
    expect(error?.code).toBe(code);
    expect(written).toEqual([]);
  });

  it("refuses too many entries", async () => {
    const entries = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`f${i}.txt`, "x"]));
    const { error } = await attempt(entries, {}, { ...limits, maxEntries: 10 });
    expect(error?.code).toBe("zip_too_many_entries");
  });

  it("refuses a zip whose total uncompressed size is over the limit", async () => {
    const { error, written } = await attempt(
      { "a.bin": Buffer.alloc(600_000, 1), "b.bin": Buffer.alloc(600_000, 2) },
      {},
      { ...limits, maxUncompressedBytes: 1_000_000 },
    );
    expect(error?.code).toBe("zip_too_large");
    expect(written).toEqual([]);
  });

  it("refuses a zip bomb by compression ratio before writing a byte", async () => {
    // 64 MiB of zeros deflate to about 64 KB: a ratio near 1000.
    const { error, written } = await attempt({ "zeros.bin": Buffer.alloc(64 * 1024 * 1024) });
    expect(error?.code).toBe("zip_bomb");
    expect(written).toEqual([]);
  });

  it("refuses an entry that holds more than its header declares", async () => {
    const { error } = await attempt({ "liar.bin": Buffer.alloc(200_000, 7) }, { "liar.bin": { declaredSize: 1000 } });
    expect(error?.code).toBe("zip_corrupt");
  });

  it("refuses a file that is not a zip", async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "extract-"));
    fs.writeFileSync(path.join(base, "x.zip"), "this is not a zip");
    await expect(extractZip(path.join(base, "x.zip"), path.join(base, "w"), limits)).rejects.toMatchObject({ code: "zip_unreadable" });
  });

  it("refuses a name given twice", async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "extract-"));
    const { ZipWriter } = await import("../helpers/zips.js");
    const w = new ZipWriter(path.join(base, "d.zip"));
    w.add("a.csv", "1").add("a.csv", "2").finish();
    await expect(extractZip(path.join(base, "d.zip"), path.join(base, "w"), limits)).rejects.toMatchObject({ code: "zip_duplicate_entry" });
  });
});
