// Validation time of zips with very many tiny entries (issues 16 and 19), and how long the event loop stalls
// meanwhile (what a concurrent /healthz would wait):
//   nice node --import tsx bench/ingest/many-entries.ts [entries...]     (default: 100000 190000)
// Each archive holds a 300-row CSV for a `data` task plus N tiny files the task does not use. Prints one JSON
// line per archive: seconds for prepareDataset, the worst event-loop delay, and the seconds to remove the work folder.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseConfig } from "../../src/config.js";
import { prepareDataset } from "../../src/datasets/prepare.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";

const counts = process.argv.slice(2).map(Number);
for (const n of counts.length ? counts : [100_000, 190_000]) {
  const zipFile = path.join(os.tmpdir(), `builder-bench-many-${n}.zip`);
  if (!fs.existsSync(zipFile)) {
    // Python's zipfile writes the zip64 records an archive of over 65,535 entries needs.
    const script = [
      "import sys, zipfile",
      "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_STORED)",
      "z.writestr('data.csv', 'id,label,f1,f2\\n' + ''.join(f'{i},{\"M\" if i % 2 else \"B\"},{i * 7 % 13},{i * 3 % 11}\\n' for i in range(300)))",
      "[z.writestr(f'notes/n{i}.txt', 'x') for i in range(int(sys.argv[2]))]",
      "z.close()",
    ].join("\n");
    execFileSync("python3", ["-c", script, `${zipFile}.partial`, String(n)]);
    fs.renameSync(`${zipFile}.partial`, zipFile);
  }
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-many-"));
  const bucketDir = path.join(workDir, "bucket");
  fs.mkdirSync(path.join(bucketDir, "u", "bench"), { recursive: true });
  fs.linkSync(zipFile, path.join(bucketDir, "u", "bench", "d.zip"));
  const config = parseConfig({ BUILDER_DATA_DIR: workDir });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const t0 = performance.now();
  const out = await prepareDataset(
    { bucket: new LocalBucket(bucketDir), config },
    {
      zipPath: "u/bench/d.zip",
      workDir: path.join(workDir, "prepare"),
      task: {
        family: "classification",
        inputs: "table",
        label_cols: ["label"],
        images_col: null,
        data_cols: ["f1", "f2"],
        split_col: null,
      },
      seed: 0,
      split: "train_val_test",
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await fs.promises.rm(path.join(workDir, "prepare"), { recursive: true, force: true });
  const rmSeconds = (performance.now() - t1) / 1000;
  delay.disable();
  console.log(
    JSON.stringify({
      entries: n + 1,
      zip_mb: +(fs.statSync(zipFile).size / 1e6).toFixed(1),
      valid: out.report.valid,
      errors: out.report.errors.map((e) => e.code),
      seconds: +seconds.toFixed(2),
      max_event_loop_delay_ms: Math.round(delay.max / 1e6),
      rm_seconds: +rmSeconds.toFixed(2),
    }),
  );
  fs.rmSync(workDir, { recursive: true, force: true });
}
