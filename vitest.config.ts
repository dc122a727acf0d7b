import fs from "node:fs";
import { defineConfig } from "vitest/config";

// The storage suite: the files that exercise the bucket (its contract, uploads, datasets, erasure, batches, model
// publication, gs:// / s3:// links in /predict). Each runs in its own tier against the local folder, then once more
// in the storage-s3 project against S3 (an S3 stand-in: test/helpers/storage.ts). Two of them train one small
// table model each (datasets-table-upload: downloaded zip, published model; deletion-experiments: a job cancelled
// mid-training); the files that train image models stay out: they reach the bucket through the same calls, and
// twice their minutes would not buy more. The second run adds about 80 s to make test (its files timed one by one).
const STORAGE_SUITE = [
  "test/unit/bucket-contract.test.ts",
  "test/integration/predict-kinds.test.ts",
  "test/integration/datasets-upload.test.ts",
  "test/integration/datasets-cli-upload.test.ts",
  "test/integration/datasets-table-upload.test.ts",
  "test/integration/deletion-account.test.ts",
  "test/integration/batches.test.ts",
  "test/integration/batches-streams.test.ts",
  "test/integration/deletion-datasets.test.ts",
  "test/integration/deletion-experiments.test.ts",
];
for (const file of STORAGE_SUITE) if (!fs.existsSync(file)) throw new Error(`vitest.config.ts: STORAGE_SUITE lists ${file}, which is gone`);

export default defineConfig({
  test: {
    // One test file at a time. Several files train real models through the Python pipelines, and the pipelines
    // size their training from measured speed (epochs that fit the budget): two training files side by side on
    // two cores give each a worse model and flaky quality checks. Serial costs minutes, not correctness.
    // `make test-unit` runs the unit project alone with two files at a time: nothing there trains.
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A worker that spawns Python training needs quiet stdout; vitest prints the summary line CI reads.
    reporters: ["default"],
    // Three tiers, each file in exactly one, run in this order, then the storage suite on S3: `vitest run` (make
    // test-ts) runs all four and `vitest run --project unit` the fast one.
    projects: [
      // No shared database, no training, no browser: the edit-test loop (make test-unit).
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } } },
      // Real Postgres, Redis, HTTP servers and the Python pipelines.
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], sequence: { groupOrder: 1 } } },
      // The built dashboard in Debian's chromium.
      { extends: true, test: { name: "browser", include: ["test/browser/**/*.test.ts"], sequence: { groupOrder: 2 } } },
      // The storage suite again, with every bucket in S3.
      // The SDK's notice that its releases after January 2027 need Node 22 (the image has 22; this machine 20) is
      // turned off here only, so that it does not bury the test output.
      {
        extends: true,
        test: {
          name: "storage-s3",
          include: STORAGE_SUITE,
          env: { TEST_STORAGE: "s3", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
