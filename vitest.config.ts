import { defineConfig } from "vitest/config";

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
    // Three tiers, each file in exactly one, run in this order: `vitest run` (make test-ts) runs all three and
    // `vitest run --project unit` the fast one.
    projects: [
      // No shared database, no training, no browser: the edit-test loop (make test-unit).
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } } },
      // Real Postgres, Redis, HTTP servers and the Python pipelines.
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], sequence: { groupOrder: 1 } } },
      // The built dashboard in Debian's chromium.
      { extends: true, test: { name: "browser", include: ["test/browser/**/*.test.ts"], sequence: { groupOrder: 2 } } },
    ],
  },
});
