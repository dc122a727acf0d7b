import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// Batch scoring (issue 38 item 3) against a real server and the serving fixtures' ONNX models: a spreadsheet of
// patients with raw category values, and a zip of images. Each line of results.csv must carry exactly the scores
// /predict gives for the same input; a bad row fails alone, with its reason, and a value outside the training
// range is flagged. tabular_binary reads age 18-95, sex {F: 0, M: 1}, bmi 14-60, site {north: 0, south: 1, east: 2}.

vi.setConfig({ testTimeout: 120_000 });

const SEXES = ["F", "M"];
const SITES = ["north", "south", "east"];

/** 100 patients: raw values as a hospital's export has them; row 7 has an unknown site, row 12 an age of 140. */
function patients(): string[][] {
  const rows = [["patient_id", "outcome", "bmi", "site", "age", "sex"]];
  for (let i = 0; i < 100; i++) {
    const age = i === 12 ? "140" : String(20 + ((i * 7) % 70));
    const site = i === 7 ? "west" : SITES[i % 3];
    rows.push([`P${String(i).padStart(4, "0")}`, String(i % 2), (18 + ((i * 13) % 300) / 10).toFixed(1), site, age, SEXES[i % 2]]);
  }
  return rows;
}

function parseCsv(text: string): string[][] {
  // results.csv quotes only cells holding a comma, quote or line break (messages)
  const out: string[][] = [];
  for (const line of text.trimEnd().split("\n")) {
    const cells: string[] = [];
    const re = /"((?:[^"]|"")*)"|([^,]*)/gy;
    for (let at = 0; at <= line.length;) {
      re.lastIndex = at;
      const m = re.exec(line)!;
      cells.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]!);
      at = re.lastIndex + 1;
    }
    out.push(cells);
  }
  return out;
}

describe.skipIf(!haveFixturePython)("batch scoring", () => {
  let server: TestServer;
  let user: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer("pglite");
    user = await createUserWithKey(server);
    const fx = servingFixtures();
    await publishFixture(server, user.userId, 1, fx.modelDir("tabular_binary"));
    await publishFixture(server, user.userId, 2, fx.modelDir("vision_binary"));
  }, 180_000);
  afterAll(() => server?.teardown());

  const send = (experimentId: number, contentType: string, body: Buffer | string) =>
    fetch(`${server.url}/v1/models/${experimentId}/batch`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": contentType }),
      body,
    });
  const predict = async (experimentId: number, message: unknown) => {
    const res = await fetch(`${server.url}/v1/experiments/${experimentId}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message }),
    });
    return { status: res.status, body: (await res.json()) as { score: number[]; prediccion: number[]; message?: string } };
  };
  async function finished(batchId: string) {
    for (let i = 0; i < 300; i++) {
      const b = (await (await fetch(`${server.url}/v1/batches/${batchId}`, { headers: bearer(user.key) })).json()) as {
        status: string;
        failure_reason: string | null;
      };
      if (b.status === "done" || b.status === "failed") return b as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error("the batch did not finish");
  }
  const results = async (batchId: string) =>
    parseCsv(await (await fetch(`${server.url}/v1/batches/${batchId}/results.csv`, { headers: bearer(user.key) })).text());

  it("100 rows of a CSV: each line's scores are /predict's for the same patient; a bad row fails alone, a far value is flagged", async () => {
    const rows = patients();
    const res = await send(1, "text/csv", rows.map((r) => r.join(",")).join("\n") + "\n");
    expect(res.status).toBe(202);
    const created = (await res.json()) as { batch_id: string; status: string; model_version: number };
    expect(created).toMatchObject({ status: "queued", model_version: 1 });
    const done = await finished(created.batch_id);
    expect(done).toMatchObject({ status: "done", total: 100, done: 100, failed: 1, flagged: 1, failure_reason: null });
    const audit = (await (await fetch(`${server.url}/v1/audit`, { headers: bearer(user.key) })).json()) as {
      data: Array<{ action: string; target: string | null }>;
    };
    expect(audit.data.find((e) => e.action === "batch_scored")).toMatchObject({ target: "experiment 1" });

    const [header, ...lines] = await results(created.batch_id);
    expect(header).toEqual(["id", "prediction", "score_risk-0", "score_risk-1", "out_of_range", "error"]);
    expect(lines).toHaveLength(100);
    for (const [i, line] of lines.entries()) {
      const r = rows[i + 1]!;
      expect(line[0]).toBe(r[0]);
      if (i === 7) {
        expect(line.slice(1, 4)).toEqual(["", "", ""]);
        expect(line[5]).toBe("site: a value the model did not see in training");
        continue;
      }
      // the message a program would send: age, sex, bmi, site as codes, in the model's order
      const sent = await predict(1, [Number(r[4]), SEXES.indexOf(r[5]!), Number(r[2]), SITES.indexOf(r[3]!)]);
      expect(sent.status).toBe(201);
      expect([Number(line[2]), Number(line[3])]).toEqual(sent.body.score);
      expect(line[1]).toBe(
        sent.body.prediccion
          .map((p, k) => (p ? `risk-${k}` : null))
          .filter(Boolean)
          .join(";"),
      );
      expect(line[4]).toBe(i === 12 ? "age" : "");
      expect(line[5]).toBe("");
    }
  });

  it("an .xlsx scores its first sheet the same way", async () => {
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet("Export");
    for (const [i, r] of patients().slice(0, 6).entries())
      sheet.addRow(i === 0 ? r : [r[0], Number(r[1]), Number(r[2]), r[3], Number(r[4]), r[5]]);
    const res = await send(
      1,
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      Buffer.from(await wb.xlsx.writeBuffer()),
    );
    expect(res.status).toBe(202);
    const { batch_id } = (await res.json()) as { batch_id: string };
    expect(await finished(batch_id)).toMatchObject({ status: "done", total: 5, failed: 0 });
    const lines = (await results(batch_id)).slice(1);
    const first = patients()[1]!;
    expect([Number(lines[0]![2]), Number(lines[0]![3])]).toEqual((await predict(1, [Number(first[4]), 0, Number(first[2]), 0])).body.score);
  });

  it("a zip of images: each image's scores are /predict's for the same image sent as a data: URI", async () => {
    const dir = path.join(servingFixtures().dir, "images");
    const names = ["rgb.png", "grey.jpg", "rgba.png"];
    const zip = makeZip({
      "readme.txt": "not an image",
      ...Object.fromEntries(names.map((n) => [`scans/${n}`, fs.readFileSync(path.join(dir, n))])),
    });
    const res = await send(2, "application/zip", zip);
    expect(res.status).toBe(202);
    const { batch_id } = (await res.json()) as { batch_id: string };
    expect(await finished(batch_id)).toMatchObject({ status: "done", total: 3, failed: 0 });
    const [header, ...lines] = await results(batch_id);
    expect(header[0]).toBe("image");
    expect(lines.map((l) => l[0])).toEqual(names.map((n) => `scans/${n}`));
    for (const [i, n] of names.entries()) {
      const sent = await predict(2, `data:image/png;base64,${fs.readFileSync(path.join(dir, n)).toString("base64")}`);
      expect(lines[i]!.slice(2, 4).map(Number)).toEqual(sent.body.score);
    }
  });

  it("refusals in words: the wrong kind of input, an unknown type, a table without the model's columns, another user's batch", async () => {
    expect((await send(2, "text/csv", "a,b\n1,2\n")).status).toBe(415);
    const unknown = await send(1, "application/json", "{}");
    expect(unknown.status).toBe(415);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain("text/csv");

    const res = await send(1, "text/csv", "patient_id,age\nP1,40\n");
    const { batch_id } = (await res.json()) as { batch_id: string };
    const failed = await finished(batch_id);
    expect(failed.status).toBe("failed");
    expect(failed.failure_reason).toBe(
      "the table has no column “sex”, “bmi”, “site”; this model reads age, sex, bmi, site (by name, in any order)",
    );
    expect((await fetch(`${server.url}/v1/batches/${batch_id}/results.csv`, { headers: bearer(user.key) })).status).toBe(409);

    const other = await createUserWithKey(server, { email: "other@hospital.example" });
    expect((await fetch(`${server.url}/v1/batches/${batch_id}`, { headers: bearer(other.key) })).status).toBe(404);
    expect(
      (
        await fetch(`${server.url}/v1/models/1/batch`, {
          method: "POST",
          headers: bearer(other.key, { "content-type": "text/csv" }),
          body: "x\n",
        })
      ).status,
    ).toBe(404);
  });

  it("at start-up a batch left queued or running by a dead process is failed with the reason; a live one is left alone", async () => {
    const res = await send(1, "text/csv", "patient_id,age,sex,bmi,site\nP1,40,F,25,north\n");
    const { batch_id: live } = (await res.json()) as { batch_id: string };
    await finished(live);
    const db = server.services.db;
    // two batches as a killed server leaves them: not touched for 10 minutes
    const dead = await db.execute(
      sql`insert into batches (user_id, experiment_uuid, experiment_id, model_version, input_kind, status, updated_at)
          select user_id, experiment_uuid, experiment_id, model_version, input_kind, s, now() - interval '10 minutes'
          from batches, (values ('queued'), ('running')) as v(s) where id = ${live} returning id`,
    );
    await server.services.batches.recover();
    const deadRows = (dead as unknown as { rows: Array<{ id: string }> }).rows;
    expect(deadRows).toHaveLength(2);
    for (const { id } of deadRows) {
      const b = (await (await fetch(`${server.url}/v1/batches/${id}`, { headers: bearer(user.key) })).json()) as Record<string, unknown>;
      expect(b).toMatchObject({
        status: "failed",
        failure_reason: "the server stopped while this batch was being scored; send the file again",
      });
    }
    expect(
      ((await (await fetch(`${server.url}/v1/batches/${live}`, { headers: bearer(user.key) })).json()) as { status: string }).status,
    ).toBe("done");
  });
});
