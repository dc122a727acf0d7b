/**
 * Summarises monitoring-ab.sh's JSON lines: per model kind and concurrency, the median over rounds of the c=1 median
 * latency and of the throughput, before and after, the change, and each round's figures (to see the noise); for
 * monitoring-arms.sh's lines (any labels), each label's medians and their ratio to the first label's.
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
const labels = [...new Set(lines.map((l) => l.label))];
const pick = (c: number) => (r: Row) => (c === 1 ? r.median : r.rps);
const of = (label: string, k: string) =>
  lines.filter((l) => l.label === label).flatMap((l) => l.results.filter((r) => `${r.kind}|${r.c}` === k));
if (labels.length === 2 && labels.includes("before") && labels.includes("after")) {
  console.log("| model | c | figure | before (median of rounds) | after | after / before | rounds before | rounds after |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const k of keys) {
    const [kind, c] = k.split("|");
    const before = of("before", k);
    const after = of("after", k);
    const figure = Number(c) === 1 ? "median ms" : "req/s";
    const p = pick(Number(c));
    const b = med(before.map(p));
    const a = med(after.map(p));
    const errors = [...before, ...after].reduce((t, r) => t + r.errors, 0);
    console.log(
      `| ${kind} | ${c} | ${figure} | ${b.toFixed(2)} | ${a.toFixed(2)} | ${(a / b).toFixed(3)} | ${before.map((r) => p(r).toFixed(2)).join(", ")} | ${after
        .map((r) => p(r).toFixed(2))
        .join(", ")} |${errors ? ` errors ${errors}` : ""}`,
    );
  }
} else {
  // monitoring-arms.sh: any labels, in the order first seen; ratios against the first.
  console.log(`| model | c | figure | label | median of rounds | / ${labels[0]} | rounds |`);
  console.log("|---|---|---|---|---|---|---|");
  for (const k of keys) {
    const [kind, c] = k.split("|");
    const figure = Number(c) === 1 ? "median ms" : "req/s";
    const p = pick(Number(c));
    const base = med(of(labels[0], k).map(p));
    for (const label of labels) {
      const rows = of(label, k);
      const m = med(rows.map(p));
      const errors = rows.reduce((t, r) => t + r.errors, 0);
      console.log(
        `| ${kind} | ${c} | ${figure} | ${label} | ${m.toFixed(2)} | ${(m / base).toFixed(3)} | ${rows.map((r) => p(r).toFixed(2)).join(", ")} |${errors ? ` errors ${errors}` : ""}`,
      );
    }
  }
}
