/**
 * Summarises monitoring-ab.sh's JSON lines: per model kind and concurrency, the median over rounds of the c=1 median
 * latency and of the throughput, before and after, the change, and each round's figures (to see the noise).
 *
 *   npx tsx bench/serve/monitoring-ab-summary.ts /tmp/monitoring-ab.jsonl
 */
import fs from "node:fs";

type Row = { kind: string; c: number; median: number; p99: number; rps: number; errors: number };
const lines = fs
  .readFileSync(process.argv[2] ?? "/tmp/monitoring-ab.jsonl", "utf8")
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l) as { label: string; results: Row[] });

const med = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const keys = [...new Set(lines.flatMap((l) => l.results.map((r) => `${r.kind}|${r.c}`)))];
console.log("| model | c | figure | before (median of rounds) | after | after / before | rounds before | rounds after |");
console.log("|---|---|---|---|---|---|---|---|");
for (const k of keys) {
  const [kind, c] = k.split("|");
  const of = (label: string) => lines.filter((l) => l.label === label).flatMap((l) => l.results.filter((r) => `${r.kind}|${r.c}` === k));
  const before = of("before");
  const after = of("after");
  const figure = Number(c) === 1 ? "median ms" : "req/s";
  const pick = (r: Row) => (Number(c) === 1 ? r.median : r.rps);
  const b = med(before.map(pick));
  const a = med(after.map(pick));
  const errors = [...before, ...after].reduce((t, r) => t + r.errors, 0);
  console.log(
    `| ${kind} | ${c} | ${figure} | ${b.toFixed(2)} | ${a.toFixed(2)} | ${(a / b).toFixed(3)} | ${before.map((r) => pick(r).toFixed(2)).join(", ")} | ${after
      .map((r) => pick(r).toFixed(2))
      .join(", ")} |${errors ? ` errors ${errors}` : ""}`,
  );
}
