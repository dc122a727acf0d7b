import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import type { BackboneSpec } from "../contract/types.js";
import { invalid, msg, say, validationText, type Message } from "../errors.js";

// Pretrained backbones as an installable asset (issue 52). An administrator installs weights once
// (`./builder backbones install <file | https URL | folder>`); each file is pinned by the SHA-256 the administrator
// gives (or the folder's backbones.json gives), refused when it does not match, and recorded with its licence in
// <data dir>/backbones/manifest.json beside the file (<sha256>.pt). The image pipeline fine-tunes the most recently
// installed one (src/jobs/spec.ts puts it in the job spec; the pipeline checks the hash again before loading). On a
// host without internet the administrator copies the files and a backbones.json into a folder and installs that.

/**
 * Why an install was refused, as catalog words: said on the administrator's terminal, which has no Accept-Language,
 * in both languages (English / Spanish), each problem after the other.
 */
export class BackboneInstallError extends Error {
  readonly texts: Message[];
  constructor(...texts: [Message, ...Message[]]) {
    const inLanguage = (lng: "en" | "es") => texts.map((t) => say(t, lng)).join("; ");
    super(`${inLanguage("en")} / ${inLanguage("es")}`);
    this.texts = texts;
  }
}

/** A zod issue's words: the schema's own catalog words (invalid()), or zod's message as it wrote it. */
export const issueProblem = (issue: z.core.$ZodIssue): Message | string => validationText(issue.message) ?? issue.message;

const SHA256 = /^[0-9a-f]{64}$/;

const wholeNumber = (min: number, max: number) => {
  const words = invalid("backbone.whole_number", { min, max });
  return z.number({ error: words }).int(words).min(min, words).max(max, words);
};

export const backboneEntrySchema = z.object({
  name: z
    .string({ error: invalid("backbone.name") })
    .trim()
    .min(1, invalid("backbone.name"))
    .max(120, invalid("backbone.name")),
  sha256: z
    .string({ error: invalid("backbone.sha256") })
    .trim()
    .toLowerCase()
    .regex(SHA256, invalid("backbone.sha256")),
  licence: z
    .string({ error: invalid("backbone.licence") })
    .trim()
    .min(1, invalid("backbone.licence"))
    .max(400, invalid("validation.at_most_chars", { max: 400 })),
  source: z
    .string({ error: invalid("validation.string") })
    .trim()
    .max(400, invalid("validation.at_most_chars", { max: 400 }))
    .default("not stated"),
  family: z.enum(["resnet", "mobile"], { error: invalid("backbone.family") }),
  width: wholeNumber(1, 1024),
  depth: wholeNumber(1, 16),
  native_side: wholeNumber(8, 4096),
});
export type BackboneEntry = z.infer<typeof backboneEntrySchema>;

export interface InstalledBackbone extends BackboneEntry {
  file: string; // in the backbones folder
  installed_at: string;
}

const manifestSchema = z.object({ backbones: z.array(backboneEntrySchema.extend({ file: z.string(), installed_at: z.string() })) });

export const backbonesDir = (dataDir: string) => path.join(dataDir, "backbones");

export async function listBackbones(dir: string): Promise<InstalledBackbone[]> {
  let text: string;
  try {
    text = await fs.promises.readFile(path.join(dir, "manifest.json"), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return manifestSchema.parse(JSON.parse(text)).backbones;
}

/** The backbone new image models fine-tune: the most recently installed; null when none is (from-scratch recipes). */
export async function chosenBackbone(dir: string): Promise<{ spec: BackboneSpec; file: string } | null> {
  const all = await listBackbones(dir);
  const last = all.at(-1);
  if (!last) return null;
  const { file, installed_at: _installedAt, ...spec } = last;
  return { spec, file: path.resolve(dir, file) };
}

function hashing(hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

async function openSource(source: string): Promise<Readable> {
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { redirect: "follow" });
    if (!res.ok || !res.body) throw new BackboneInstallError(msg("backbone.download_failed", { source, status: res.status }));
    return Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
  }
  try {
    await fs.promises.access(source, fs.constants.R_OK);
  } catch {
    throw new BackboneInstallError(msg("backbone.unreadable", { source }));
  }
  return fs.createReadStream(source);
}

async function writeManifest(dir: string, backbones: InstalledBackbone[]): Promise<void> {
  const tmp = path.join(dir, `.manifest.${randomUUID()}.json`);
  await fs.promises.writeFile(tmp, `${JSON.stringify({ backbones }, null, 2)}\n`);
  await fs.promises.rename(tmp, path.join(dir, "manifest.json"));
}

/** Copies one weights file (a path or an http(s) URL) into the backbones folder, refusing it unless its SHA-256 is the
 * pinned one. Installing a name again replaces that entry; the newest install is the one used. */
export async function installBackbone(dir: string, source: string, entry: BackboneEntry): Promise<InstalledBackbone> {
  await fs.promises.mkdir(dir, { recursive: true });
  const hash = createHash("sha256");
  const tmp = path.join(dir, `.incoming.${randomUUID()}`);
  try {
    await pipeline(await openSource(source), hashing(hash), fs.createWriteStream(tmp));
    const found = hash.digest("hex");
    if (found !== entry.sha256) {
      // Said on the administrator's terminal, which has no Accept-Language: both languages, from the catalog.
      throw new BackboneInstallError(msg("backbone.sha_mismatch", { name: entry.name, found, pinned: entry.sha256 }));
    }
    const file = `${found}.pt`;
    await fs.promises.rename(tmp, path.join(dir, file));
    const installed: InstalledBackbone = { ...entry, file, installed_at: new Date().toISOString() };
    const others = (await listBackbones(dir)).filter((b) => b.name !== entry.name);
    await writeManifest(dir, [...others, installed]);
    return installed;
  } finally {
    await fs.promises.rm(tmp, { force: true });
  }
}

const folderSchema = z.array(backboneEntrySchema.extend({ file: z.string().min(1) }));

/** An air-gapped host: every file a folder's backbones.json lists (each with its pin, licence and recipe). */
export async function installFolder(dir: string, folder: string): Promise<InstalledBackbone[]> {
  const listing = path.join(folder, "backbones.json");
  let entries: z.infer<typeof folderSchema>;
  try {
    entries = folderSchema.parse(JSON.parse(await fs.promises.readFile(listing, "utf8")));
  } catch (err) {
    if (!(err instanceof z.ZodError))
      throw new BackboneInstallError(msg("backbone.listing_unreadable", { listing, why: (err as Error).message }));
    throw new BackboneInstallError(
      msg("backbone.bad_listing", { listing }),
      ...err.issues.map((i) => msg("backbone.entry_problem", { path: i.path.join("."), problem: issueProblem(i) })),
    );
  }
  const done: InstalledBackbone[] = [];
  for (const { file, ...entry } of entries) done.push(await installBackbone(dir, path.resolve(folder, file), entry));
  return done;
}

export async function removeBackbone(dir: string, name: string): Promise<boolean> {
  const all = await listBackbones(dir);
  const gone = all.filter((b) => b.name === name);
  if (!gone.length) return false;
  const kept = all.filter((b) => b.name !== name);
  await writeManifest(dir, kept);
  for (const b of gone) if (!kept.some((k) => k.file === b.file)) await fs.promises.rm(path.join(dir, b.file), { force: true });
  return true;
}
