// Prints one closing line for the whole suite, "tests: N passed, N failed, N skipped",
// from the result files that `make test-py` (pytest JUnit XML) and `make test-ts` (vitest JSON) write.
import fs from "node:fs";

let passed = 0,
  failed = 0,
  skipped = 0;
const py = ".test-results/pytest.xml";
if (fs.existsSync(py)) {
  const m = fs.readFileSync(py, "utf8").match(/<testsuite\b[^>]*>/);
  const attr = (name) => Number(m?.[0].match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0);
  const [tests, failures, errors, skips] = ["tests", "failures", "errors", "skipped"].map(attr);
  passed += tests - failures - errors - skips;
  failed += failures + errors;
  skipped += skips;
}
const ts = ".test-results/vitest.json";
if (fs.existsSync(ts)) {
  const r = JSON.parse(fs.readFileSync(ts, "utf8"));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
