// Erased data left as raw bytes in the embedded database's files (issue 48 finding 10). A PGlite data folder gets two
// users: the one erased has an experiment whose dataset reports name 500 patient ids and a category value, an
// intended-use text, and an uploaded file with a telling name; the other keeps the same kind of data. The folder is
// grepped byte for byte (every file: tables, indexes, TOAST, WAL) after a checkpoint, the account is erased, the
// server closed, and the folder grepped again. Prints one JSON line; asserts nothing.
//   node --import tsx bench/security/erasure-compaction.ts [--src DIR]
// --src: the source tree to run (default this checkout's src/); "before" figures run main's code at the branch point:
//   mkdir -p /tmp/before && git archive <main> src migrations package.json pipelines/contract docs | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
//   node --import tsx bench/security/erasure-compaction.ts --src /tmp/before/src
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { sql } from "drizzle-orm";
import type { Services } from "../../src/services.js";
import { createUserWithKey } from "../../test/helpers/auth.js";
import type { TestServer } from "../../test/helpers/server.js";
import { makeZip } from "../../test/helpers/zips.js";
import { servingFixtures } from "../../test/fixtures/serving/fixtures.js";
import { publishFixture } from "../../test/fixtures/serving/publish.js";

const srcArg = process.argv.indexOf("--src");
const src = path.resolve(srcArg > 0 ? process.argv[srcArg + 1] : path.join(import.meta.dirname, "../../src"));
const { createServices } = (await import(pathToFileURL(path.join(src, "services.ts")).href)) as typeof import("../../src/services.js");
const { parseConfig } = (await import(pathToFileURL(path.join(src, "config.ts")).href)) as typeof import("../../src/config.js");

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-erasure-compaction-"));
const pglite = path.join(dataDir, "pglite");
const start = () => createServices(parseConfig({ BUILDER_DATA_DIR: dataDir, LOG_LEVEL: "silent" }), { runner: false });

/** Occurrences of each needle in every file under dir. */
function grep(dir: string, needles: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(Object.keys(needles).map((k) => [k, 0]));
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const bytes = fs.readFileSync(p);
        for (const [k, n] of Object.entries(needles)) for (let i = bytes.indexOf(n); i >= 0; i = bytes.indexOf(n, i + 1)) out[k]++;
      }
    }
  };
  walk(dir);
  return out;
}
const du = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((s, e) => {
    const p = path.join(dir, e.name);
    return s + (e.isDirectory() ? du(p) : e.isFile() ? fs.statSync(p).size : 0);
  }, 0);

let services: Services = await start();
const server = { services } as TestServer;
const model = servingFixtures().modelDir("tabular_binary");
const plant = async (prefix: string) => {
  const u = await createUserWithKey(server);
  const exp = await publishFixture(server, u.userId, 1, model, 1, false);
  const ids = Array.from({ length: 500 }, (_, i) => `${prefix}PAT-${String(i).padStart(6, "0")}`);
  await services.experiments.repo.setLabels(exp.experimentUuid, { intended_use: `${prefix}USE triage of screening mammograms` });
  // Events of 10 ids each: a row under 2 KB is stored as is, a larger one compressed in TOAST (where a byte grep
  // would not see it, though it is just as readable).
  for (let i = 0; i < ids.length; i += 10)
    await services.experiments.repo.addEvent(exp.experimentUuid, "report", {
      samples: { patient_id: ids.slice(i, i + 10) },
      categories: [`${prefix}CAT-luminal-b`],
    });
  const csv = ["patient_id,subtype,y", ...ids.map((id, i) => `${id},${prefix}CAT-luminal-b,${i % 2}`)].join("\n") + "\n";
  await services.datasets.upload(u.scope, `${u.userId}/study/${prefix}FILE-cohort.zip`, Readable.from(makeZip({ "data.csv": csv })));
  return u;
};
const alice = await plant("ZQX");
await plant("ZQY");
const needles = (p: string) => ({
  [`${p}: patient ids`]: `${p}PAT-`,
  [`${p}: category value`]: `${p}CAT-luminal-b`,
  [`${p}: file name`]: `${p}FILE-cohort`,
  [`${p}: intended use`]: `${p}USE triage`,
});
const all = { ...needles("ZQX"), ...needles("ZQY") };
await services.db.execute(sql`checkpoint`);
const before = grep(pglite, all);
const bytesBefore = du(pglite);

const t0 = process.hrtime.bigint();
await services.erasure.begin({ userId: alice.userId, via: "session" });
await services.erasure.finish(alice.userId);
const erasureS = Number(process.hrtime.bigint() - t0) / 1e9;
await services.close();
const after = grep(pglite, all);
// A restart changes nothing (and, with the fix, finds no compaction due).
services = await start();
await services.close();
const afterRestart = grep(pglite, all);
console.log(
  JSON.stringify({
    src: path.relative(process.cwd(), src) || ".",
    load: os.loadavg()[0].toFixed(1),
    erasure_s: Math.round(erasureS * 100) / 100,
    pglite_mb_before: Math.round(bytesBefore / 1e5) / 10,
    pglite_mb_after: Math.round(du(pglite) / 1e5) / 10,
    found_before: before,
    found_after_erasure: after,
    found_after_restart: afterRestart,
  }),
);
fs.rmSync(dataDir, { recursive: true, force: true });
