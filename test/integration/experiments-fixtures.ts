import fs from "node:fs";
import { makeZip } from "../helpers/zips.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Shared by the experiments integration tests: a tabular zip (WDBC when ../shared/datasets has it, else generated
// data with a real signal), request bodies, and polling helpers.

const WDBC = new URL("../../../shared/datasets/wdbc/data.csv", import.meta.url);

export function tabularZip(): { zip: Buffer; dataCols: string[]; label: string; source: "wdbc" | "generated" } {
  if (fs.existsSync(WDBC)) {
    const csv = fs.readFileSync(WDBC, "utf8");
    const header = csv.split(/\r?\n/, 1)[0].split(",");
    return { zip: makeZip({ "data.csv": csv }), dataCols: header.slice(2), label: "diagnosis", source: "wdbc" };
  }
  // 240 patients, two informative features and one noise feature.
  const rows = diagnosisRows(240, 7, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
  return { zip: makeZip({ "data.csv": rows.join("\n") + "\n" }), dataCols: ["f1", "f2", "noise"], label: "diagnosis", source: "generated" };
}

/**
 * CSV lines (header first) of n patients with a real signal: features f1, f2 and a label `diagnosis` (M/B) from a
 * noisy linear rule, seeded; `extra` appends one more column computed per row after the label.
 */
export function diagnosisRows(
  n: number,
  seed: number,
  extra: { name: string; value: (i: number, rand: () => number) => string },
): string[] {
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const rows = [`id,diagnosis,f1,f2,${extra.name}`];
  for (let i = 0; i < n; i++) {
    const f1 = rand() * 10;
    const f2 = rand() * 5;
    const y = f1 + 2 * f2 + (rand() - 0.5) * 4 > 10 ? "M" : "B";
    rows.push(`${1000 + i},${y},${f1.toFixed(3)},${f2.toFixed(3)},${extra.value(i, rand)}`);
  }
  return rows;
}

const PIMA = new URL("../../../shared/datasets/pima/pima-indians-diabetes.data.csv", import.meta.url);
export const havePima = fs.existsSync(PIMA);

/** Pima's eight measurements with the diagnosis replaced by a seeded coin toss (M/B): nothing to learn. */
export function randomLabelCsv(): { csv: string; dataCols: string[] } {
  const dataCols = ["pregnancies", "glucose", "pressure", "skin", "insulin", "bmi", "pedigree", "age"];
  let seed = 20260537;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lines = fs.readFileSync(PIMA, "utf8").trim().split(/\r?\n/);
  const rows = lines.map((line, i) => `${i + 1},${rand() < 0.5 ? "M" : "B"},${line.split(",").slice(0, 8).join(",")}`);
  return { csv: [`id,diagnosis,${dataCols.join(",")}`, ...rows].join("\n") + "\n", dataCols };
}

/**
 * 768 patients with eight made-up measurements and a coin-toss label: a model cannot beat chance on it. Needs no
 * dataset from ../shared, so tests built on it also run in a fresh clone.
 */
export function syntheticRandomLabelCsv(): { csv: string; dataCols: string[] } {
  const dataCols = ["pregnancies", "glucose", "pressure", "skin", "insulin", "bmi", "pedigree", "age"];
  let seed = 20261128;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const rows: string[] = [];
  for (let i = 0; i < 768; i++) {
    const label = rand() < 0.5 ? "M" : "B";
    rows.push(`${i + 1},${label},${dataCols.map((_, j) => (rand() * (j + 1) * 10).toFixed(2)).join(",")}`);
  }
  return { csv: [`id,diagnosis,${dataCols.join(",")}`, ...rows].join("\n") + "\n", dataCols };
}

/** 900 patients at three sites; at site C the label is a coin toss (the model cannot be right there), elsewhere a rule. */
export function plantedSites(): string {
  let seed = 20261127;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const rows = ["id,diagnosis,f1,f2,site,age"];
  for (let i = 0; i < 900; i++) {
    const site = ["A", "B", "C"][i % 3];
    const f1 = rand() * 10;
    const f2 = rand() * 5;
    const age = 20 + Math.floor(rand() * 60);
    const y = site === "C" ? (rand() < 0.5 ? "M" : "B") : f1 + 2 * f2 + (rand() - 0.5) * 6 > 10 ? "M" : "B";
    rows.push(`${5000 + i},${y},${f1.toFixed(3)},${f2.toFixed(3)},${site},${age}`);
  }
  return rows.join("\n") + "\n";
}

export function dataRequest(
  userId: string,
  experimentId: number,
  zipPath: string,
  dataCols: string[],
  extra: Record<string, unknown> = {},
) {
  return {
    zip_gcloud: zipPath,
    label_cols: ["diagnosis"],
    data_cols: dataCols,
    model_type: 0,
    optimization_type: 1,
    experiment_id: experimentId,
    user_token: "seed-token-never-stored",
    user_id: userId,
    study_type: "Builder",
    task: "data",
    optimization_metric: "AUC",
    time_budget_s: 4,
    ...extra,
  };
}

/** A server on the primary target, one user with a key, and a client for them (each describe block's setup). */
export async function startExperimentServer(): Promise<{ server: TestServer; user: UserWithKey; client: Api }> {
  const server = await startTestServer(primaryTarget());
  const user = await createUserWithKey(server);
  return { server, user, client: api(server.url, user.key) };
}

/** A vision classification request in the seed's structure (fast mode, AUC), with overrides. */
export function visionRequest(userId: string, experimentId: number, zipPath: string, extra: Record<string, unknown> = {}) {
  return {
    zip_gcloud: zipPath,
    label_cols: ["label"],
    images_col: "image",
    model_type: 0,
    optimization_type: 1,
    experiment_id: experimentId,
    user_id: userId,
    study_type: "Builder",
    task: "vision",
    optimization_metric: "AUC",
    ...extra,
  };
}

export interface Api {
  post(path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  get(path: string): Promise<{ status: number; body: any; headers: Headers }>;
  patch(path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  put(path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  del(path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
}

export function api(baseUrl: string, key: string): Api {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: bearer(key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* plain text */
    }
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  return {
    post: (p, b) => call("POST", p, b),
    get: (p) => call("GET", p),
    patch: (p, b) => call("PATCH", p, b),
    put: (p, b) => call("PUT", p, b),
    del: (p, b) => call("DELETE", p, b),
  };
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 90_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls GET /v1/experiments/{id} until the status is one of `statuses`. */
export function waitForStatus(client: Api, experimentId: number, statuses: string[], timeoutMs = 90_000) {
  let last = "";
  return waitFor(
    `experiment ${experimentId} to reach ${statuses.join("|")}`,
    async () => {
      const r = await client.get(`/v1/experiments/${experimentId}`);
      last = r.body?.status;
      return statuses.includes(last) ? r.body : undefined;
    },
    timeoutMs,
  ).catch((err) => {
    throw new Error(`${(err as Error).message} (last status ${last})`);
  });
}
