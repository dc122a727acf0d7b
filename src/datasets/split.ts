import { problem, type ReportBuilder } from "./report.js";
import type { PatientSplit } from "./types.js";

// The patient-grouped split: every row of a patient goes to the same part, so the test metrics are
// measured on patients the model never saw. Seeded and reproducible: the same patients, strata and seed
// give the same split whatever the row order. Stratified by class where a class has enough patients.

export interface SplitFractions {
  val: number;
  test: number;
}
export const DEFAULT_FRACTIONS: SplitFractions = { val: 0.15, test: 0.15 };

/** mulberry32: a tiny, well-mixed 32-bit PRNG; enough for shuffling, identical on every platform. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * patients: patient id -> stratum (its class; "" when not stratified). Within each stratum of n >= 3
 * patients, at least one goes to validation and one to test; smaller strata go to train first.
 */
export function splitPatients(patients: Map<string, string>, seed: number, fractions: SplitFractions = DEFAULT_FRACTIONS): PatientSplit {
  const rand = prng(seed);
  const strata = new Map<string, string[]>();
  for (const [pid, stratum] of patients) {
    if (!strata.has(stratum)) strata.set(stratum, []);
    strata.get(stratum)!.push(pid);
  }
  const out: PatientSplit = { seed, train: [], val: [], test: [] };
  for (const stratum of [...strata.keys()].sort(byString)) {
    const ids = shuffle(strata.get(stratum)!.sort(byString), rand);
    const n = ids.length;
    let nTest = Math.round(n * fractions.test);
    let nVal = Math.round(n * fractions.val);
    if (n >= 3) {
      nTest = Math.max(1, nTest);
      nVal = Math.max(1, nVal);
    } else if (n === 2) {
      nTest = 1;
      nVal = 0;
    } else {
      nTest = 0;
      nVal = 0;
    }
    // A loop, not push(...ids): spreading a few hundred thousand ids as arguments overflows the call stack.
    ids.forEach((id, i) => (i < nTest ? out.test : i < nTest + nVal ? out.val : out.train).push(id));
  }
  for (const part of [out.train, out.val, out.test]) part.sort(byString);
  assertDisjoint(out);
  return out;
}

/** Retrospective: every patient is tested. */
export function allTest(patients: Iterable<string>, seed: number): PatientSplit {
  return { seed, train: [], val: [], test: [...new Set(patients)].sort(byString) };
}

/** No patient in two parts: checked on every split made, not assumed. */
export function assertDisjoint(split: PatientSplit): void {
  const where = new Map<string, string>();
  for (const part of ["train", "val", "test"] as const) {
    for (const id of split[part]) {
      const before = where.get(id);
      if (before) throw new Error(`patient ${id} is in both ${before} and ${part}`);
      where.set(id, part);
    }
  }
}

/** The stratum of each patient: its most frequent label (ties: the smallest), or a regression quantile bin. */
export function patientStrata(
  rows: Array<{ patient: string; label: string }>,
  opts: { regression?: boolean; bins?: number } = {},
): Map<string, string> {
  const perPatient = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (!perPatient.has(r.patient)) perPatient.set(r.patient, new Map());
    const m = perPatient.get(r.patient)!;
    m.set(r.label, (m.get(r.label) ?? 0) + 1);
  }
  const out = new Map<string, string>();
  if (opts.regression) {
    // Mean label per patient, then quantile bins, so train/val/test cover the same range of values.
    const means = [...perPatient].map(([pid, m]) => {
      let s = 0;
      let c = 0;
      for (const [v, k] of m) {
        s += Number(v) * k;
        c += k;
      }
      return [pid, s / c] as const;
    });
    means.sort((a, b) => a[1] - b[1] || byString(a[0], b[0]));
    const bins = Math.max(1, Math.min(opts.bins ?? 5, Math.floor(means.length / 3)));
    means.forEach(([pid], i) => out.set(pid, String(Math.floor((i * bins) / means.length))));
    return out;
  }
  for (const [pid, m] of perPatient) {
    const best = [...m].sort((a, b) => b[1] - a[1] || byString(a[0], b[0]))[0][0];
    out.set(pid, best);
  }
  return out;
}

// The user's own split (split_col): a CSV column saying which part each row belongs to, as AutoML tools allow
// (Google AutoML Vision's ML_USE column). Patients stay whole: all rows of a patient must name one part.

export type SplitPart = "train" | "val" | "test";

/** Accepted values, compared trimmed and case-insensitively. */
const PART_OF_VALUE: Record<string, SplitPart> = { train: "train", validation: "val", val: "val", test: "test" };

export function splitPartOf(value: string): SplitPart | null {
  return PART_OF_VALUE[value.trim().toLowerCase()] ?? null;
}

export interface SplitColumnRow {
  /** Spreadsheet row number. */
  row: number;
  patient: string;
  value: string;
  /** Classification only: the row's value in each label column (for the warnings on classes missing from a part). */
  labels?: string[];
}

/** What the checks need to say: the split column's name, the label columns' names (classification) and the report. */
export interface SplitColumnContext {
  column: string;
  labelCols: string[];
  report: Pick<ReportBuilder, "error" | "warn">;
}

/**
 * The split the user wrote in `column`. Every problem goes to the report; returns null when there is an error:
 * a value that is not train/validation/val/test, a patient whose rows name different parts, an empty part.
 */
export function splitFromColumn(rows: SplitColumnRow[], seed: number, ctx: SplitColumnContext): PatientSplit | null {
  const { column, report } = ctx;
  const first = new Map<string, { part: SplitPart; row: number }>();
  const mixed = new Set<string>();
  let bad = false;
  for (const r of rows) {
    const part = splitPartOf(r.value);
    if (!part) {
      bad = true;
      report.error(
        "split_value_invalid",
        r.value.trim() === ""
          ? problem("dataset.split_value_empty", { row: r.row, column })
          : problem("dataset.split_value_invalid", { row: r.row, value: r.value, column }),
        { row: r.row, column },
      );
      continue;
    }
    const seen = first.get(r.patient);
    if (!seen) first.set(r.patient, { part, row: r.row });
    else if (seen.part !== part && !mixed.has(r.patient)) {
      mixed.add(r.patient);
      report.error(
        "split_patient_mixed",
        problem("dataset.split_patient_mixed", { patient: r.patient, first: seen.part, first_row: seen.row, part, row: r.row, column }),
        { row: r.row, column },
      );
    }
  }
  const out: PatientSplit = { seed, train: [], val: [], test: [] };
  for (const [pid, { part }] of first) if (!mixed.has(pid)) out[part].push(pid);
  if (bad || mixed.size) return null;
  for (const part of ["train", "val", "test"] as const) {
    if (out[part].length === 0) {
      report.error("split_part_empty", problem("dataset.split_part_empty", { column, part }), { column });
    }
  }
  if (!out.train.length || !out.val.length || !out.test.length) return null;
  warnMissingClasses(rows, first, ctx);
  for (const part of [out.train, out.val, out.test]) part.sort(byString);
  assertDisjoint(out);
  return out;
}

/** A class with no patient in a part cannot be learnt (train), thresholded (validation) or measured (test). */
function warnMissingClasses(rows: SplitColumnRow[], partOf: Map<string, { part: SplitPart }>, ctx: SplitColumnContext): void {
  ctx.labelCols.forEach((col, li) => {
    const parts = new Map<string, Set<SplitPart>>();
    for (const r of rows) {
      const cls = r.labels?.[li];
      if (cls === undefined || cls === "") continue;
      if (!parts.has(cls)) parts.set(cls, new Set());
      parts.get(cls)!.add(partOf.get(r.patient)!.part);
    }
    for (const cls of [...parts.keys()].sort(byString)) {
      const missing = (["train", "val", "test"] as const).filter((p) => !parts.get(cls)!.has(p));
      if (missing.length) {
        ctx.report.warn(
          "split_class_missing",
          missing.length === 1
            ? problem("dataset.split_class_missing", { class: cls, column: col, part: missing[0], split: ctx.column })
            : problem("dataset.split_class_missing_two", {
                class: cls,
                column: col,
                part: missing[0],
                other: missing[1],
                split: ctx.column,
              }),
          { column: ctx.column },
        );
      }
    }
  });
}

/** Below this many test patients of one class (or in all, for regression) the test figures are a rough guide. */
export const SMALL_TEST_CLASS = 5;
export const SMALL_TEST_TOTAL = 20;

/**
 * Says so when the test part is small. With one to four patients of a class, one patient more or less right moves an
 * AUC or an F1 a long way (a single positive ranked last gives AUC 0 with the interval [0, 0]), and the bootstrap
 * interval can show no more than those patients hold. `strata`: each patient's class (patientStrata); null for
 * regression, where only the total counts. Multi-label and detection are not judged here.
 */
export function warnSmallTestPart(split: PatientSplit, strata: Map<string, string> | null, report: Pick<ReportBuilder, "warn">): void {
  const n = split.test.length;
  if (!strata) {
    if (n < SMALL_TEST_TOTAL) report.warn("small_test_part", problem("dataset.small_test_part", { count: n }));
    return;
  }
  // Every class of the table, with 0 for one that has no patient in test.
  const perClass = new Map<string, number>([...new Set(strata.values())].map((c) => [c, 0]));
  for (const p of split.test) {
    const cls = strata.get(p)!;
    perClass.set(cls, perClass.get(cls)! + 1);
  }
  const few = [...perClass].filter(([, k]) => k < SMALL_TEST_CLASS).sort((a, b) => a[1] - b[1] || byString(a[0], b[0]));
  if (few.length) {
    const classes = few.map(([c, k]) => `'${c}' ${k}`).join(", ");
    report.warn("small_test_part", problem("dataset.small_test_classes", { count: n, classes }));
  }
}
