// A large table through the datasets stage (issue 48 finding 8: a 400k-row table failed with "Maximum call stack
// size exceeded" in the split). Writes a generated CSV (one row per patient: id, 8 numeric columns, 2 categorical,
// a binary label) in a zip, then runs prepareDataset on it in a fresh process and prints its time and peak RSS.
// Prints figures; asserts nothing.
//   node --import tsx bench/ingest/table-rows.ts [--rows 400000] [--repeat 1] [--src DIR]
// --src: the source tree the measured run imports (default this checkout's src/), e.g. main's at the branch point
// extracted with `git archive <main> src pipelines/contract | tar -x -C /tmp/before` and node_modules linked in.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pathToFileURL } from "node:url";
import { ZipWriter } from "../../test/helpers/zips.js";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};

if (process.argv[2] === "child") {
  // The measured run: the datasets stage alone, in its own process so that maxRSS is its own.
  const [, , , workDir, src] = process.argv;
  const load = async <T>(rel: string) => (await import(pathToFileURL(path.join(src, rel)).href)) as T;
  const { parseConfig } = await load<typeof import("../../src/config.js")>("config.ts");
  const { prepareDataset } = await load<typeof import("../../src/datasets/prepare.js")>("datasets/prepare.ts");
  const { LocalBucket } = await load<typeof import("../../src/storage/local-bucket.js")>("storage/local-bucket.ts");
  const config = parseConfig({ BUILDER_DATA_DIR: workDir });
  const t0 = process.hrtime.bigint();
  let out: Record<string, unknown>;
  try {
    const r = await prepareDataset(
      { bucket: new LocalBucket(path.join(workDir, "bucket")), config },
      {
        zipPath: "u/bench/d.zip",
        workDir: path.join(workDir, "prepare"),
        task: {
          family: "classification",
          inputs: "table",
          label_cols: ["label"],
          images_col: null,
          data_cols: ["x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "site", "sex"],
          split_col: null,
        },
        seed: 0,
        split: "train_val_test",
      },
    );
    out = {
      valid: r.report.valid,
      errors: r.report.errors.slice(0, 3).map((e) => `${e.code}: ${e.message}`),
      rows: r.report.summary.rows,
      split: r.report.summary.split,
    };
  } catch (err) {
    out = { thrown: (err as Error).message };
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(
    JSON.stringify({ seconds: Math.round(seconds * 100) / 100, max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), ...out }),
  );
} else {
  const ROWS = arg("rows", 400_000);
  const srcArg = process.argv.indexOf("--src");
  const src = path.resolve(srcArg > 0 ? process.argv[srcArg + 1] : path.join(import.meta.dirname, "../../src"));
  const REPEAT = arg("repeat", 1);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-table-rows-"));
  const dir = path.join(work, "bucket", "u", "bench");
  fs.mkdirSync(dir, { recursive: true });
  const lines = ["patient_id,x0,x1,x2,x3,x4,x5,x6,x7,site,sex,label"];
  for (let i = 0; i < ROWS; i++) {
    const x = Array.from({ length: 8 }, (_, k) => (((i * (k + 7)) % 1000) / 10).toFixed(1));
    lines.push(`P${i},${x.join(",")},site${i % 5},${i % 2 ? "F" : "M"},${(i * 13) % 3 === 0 ? 1 : 0}`);
  }
  const csv = lines.join("\n") + "\n";
  const w = new ZipWriter(path.join(dir, "d.zip"));
  w.add("table.csv", csv);
  w.finish();
  console.log(
    `${path.relative(process.cwd(), src)}: ${ROWS} rows, CSV ${(csv.length / 1024 / 1024).toFixed(1)} MB, load ${os.loadavg()[0].toFixed(1)}`,
  );
  const self = fileURLToPath(import.meta.url);
  for (let r = 0; r < REPEAT; r++) {
    fs.rmSync(path.join(work, "prepare"), { recursive: true, force: true });
    const run = spawnSync(process.execPath, ["--import", "tsx", self, "child", work, src], { encoding: "utf8" });
    process.stdout.write(run.stdout || run.stderr.slice(-2000));
  }
  fs.rmSync(work, { recursive: true, force: true });
}
