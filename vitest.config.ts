import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two cores: two test files at a time; integration tests start real servers and databases.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A worker that spawns Python training needs quiet stdout; vitest prints the summary line CI reads.
    reporters: ["default"],
  },
});
