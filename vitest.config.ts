import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One test file at a time. Several files train real models through the Python pipelines, and the pipelines
    // size their training from measured speed (epochs that fit the budget): two training files side by side on
    // two cores give each a worse model and flaky quality checks. Serial costs minutes, not correctness.
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A worker that spawns Python training needs quiet stdout; vitest prints the summary line CI reads.
    reporters: ["default"],
  },
});
