import fs from "node:fs";
import { Readable } from "node:stream";
import { expect } from "vitest";
import type { UserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, waitForStatus } from "./experiments-fixtures.js";

// The Pima model the monitoring tests watch (issue 49's tables "done when"): its rows, its eight columns, and one
// build through the real pipeline as experiment 1 of the user. Shared so that the API, alert and dashboard tests
// build the same model the same way.

// ../shared beside the checkout (a helper's worktree sits one folder deeper, under wt/).
const PIMA_URL = ["../../../shared", "../../../../shared"]
  .map((up) => new URL(`${up}/datasets/pima/pima-indians-diabetes.data.csv`, import.meta.url))
  .find((u) => fs.existsSync(u));

export const havePimaRows = PIMA_URL !== undefined;
export const PIMA_COLS = ["Pregnancies", "Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI", "DiabetesPedigreeFunction", "Age"];

/** Pima's 768 rows as numbers: the eight measurements, then the diagnosis (0/1). Empty without ../shared. */
export function pimaRows(): number[][] {
  if (!PIMA_URL) return [];
  return fs
    .readFileSync(PIMA_URL, "utf8")
    .trim()
    .split(/\r?\n/)
    .map((l) => l.split(",").map(Number));
}

/** Uploads the rows as a zip and builds experiment 1 through the real pipeline; fails the hook if it did not build. */
export async function buildPimaModel(server: TestServer, user: UserWithKey, rows: number[][]): Promise<void> {
  const csv = [`id,${PIMA_COLS.join(",")},diagnosis`, ...rows.map((r, i) => `${i + 1},${r.join(",")}`)].join("\n") + "\n";
  const zip = `${user.userId}/pima/data.zip`;
  await server.services.bucket.write(zip, Readable.from(makeZip({ "data.csv": csv })));
  const client = api(server.url, user.key);
  expect((await client.post("/v1/experiments", dataRequest(user.userId, 1, zip, PIMA_COLS))).status).toBe(202);
  const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 240_000);
  expect(done.failure_reason).toBeNull();
}
