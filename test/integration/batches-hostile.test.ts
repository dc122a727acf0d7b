import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ResultsFile } from "../../src/batches/results.js";
import type { ServedManifest } from "../../src/serving/manifest.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { csvWithLongLine, patientsCsv, xlsxRepeatedId } from "../helpers/hostile-batches.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// Issue 48 (a probe of batch scoring as an attacker and a careless user), against a real server and the serving
// fixtures' models (tabular_binary reads age, sex {F, M}, bmi, site {north, south, east}):
// - finding 4: a small workbook must not become a huge table and results.csv, a table is held to BATCH_MAX_CELLS,
//   and one user's large files must not hold another user's batch behind them;
// - finding 5: a CSV with one enormous line is refused at the row cap, with the line named;
// - finding 6: an id that a spreadsheet of a ';' locale would split into a formula is written inert;
// - finding 14: a stray quote, a quote that never closes and a '../' name in a zip are answered in words naming the
//   line or the entry (in Spanish for Accept-Language: es), not "internal error".

vi.setConfig({ testTimeout: 120_000 });

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const MAX_CELLS = 5000;

describe.skipIf(!haveFixturePython)("batch scoring, hostile and careless files (issue 48)", () => {
  let server: TestServer;
  let user: UserWithKey;
  let other: UserWithKey;
  let tmp: string;
  beforeAll(async () => {
    server = await startTestServer("pglite", { BATCH_MAX_CELLS: String(MAX_CELLS) });
    user = await createUserWithKey(server);
    other = await createUserWithKey(server);
    const fx = servingFixtures();
    await publishFixture(server, user.userId, 1, fx.modelDir("tabular_binary"));
    await publishFixture(server, user.userId, 2, fx.modelDir("vision_binary"));
    await publishFixture(server, other.userId, 1, fx.modelDir("tabular_binary"));
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "batches-hostile-"));
  }, 180_000);
  afterAll(async () => {
    await server?.teardown();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const send = async (experimentId: number, contentType: string, body: Buffer | string, who = user) => {
    const res = await fetch(`${server.url}/v1/models/${experimentId}/batch`, {
      method: "POST",
      headers: bearer(who.key, { "content-type": contentType }),
      body,
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { batch_id: string }).batch_id;
  };
  const view = async (batchId: string, who = user, lang = "en") =>
    (await (await fetch(`${server.url}/v1/batches/${batchId}`, { headers: bearer(who.key, { "accept-language": lang }) })).json()) as {
      status: string;
      failure_reason: string | null;
      finished_at: string | null;
      total: number | null;
      failed: number;
    };
  async function finished(batchId: string, who = user) {
    for (let i = 0; i < 1200; i++) {
      const b = await view(batchId, who);
      if (b.status === "done" || b.status === "failed") return b;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the batch did not finish");
  }
  const resultsText = async (batchId: string) =>
    (await fetch(`${server.url}/v1/batches/${batchId}/results.csv`, { headers: bearer(user.key) })).text();

  it("finding 4: a 36 KB workbook whose rows share one 30,000-character id is refused before it becomes 60 MB of table", async () => {
    const xlsx = xlsxRepeatedId({ rows: 2000, idChars: 30_000 });
    expect(xlsx.length).toBeLessThan(100_000);
    const b = await finished(await send(1, XLSX, xlsx));
    expect(b.status).toBe("failed");
    expect(b.failure_reason).toMatch(
      /^the workbook expands past \d+(\.\d)? MiB \(ZIP_MAX_COMPRESSION_RATIO: 200 times its \d+ KiB, at least 1 MiB\)/,
    );
    // nothing half-written is left: no results, and the batch's work folder is gone
    expect(fs.readdirSync(path.join(server.dataDir, "tmp")).filter((f) => f.startsWith("batch-"))).toEqual([]);
  });

  it("finding 4: a table past BATCH_MAX_CELLS is refused before anything is scored; an over-long id fails its row alone", async () => {
    const big = await finished(await send(1, "text/csv", patientsCsv(1200)));
    expect(big).toMatchObject({ status: "failed", total: null });
    expect(big.failure_reason).toBe(
      `the table has more than ${MAX_CELLS} cells (rows × columns, here 5 columns), the most one batch reads (BATCH_MAX_CELLS): split it into files of at most 999 rows`,
    );
    const rows = `patient_id,age,sex,bmi,site\nP1,40,F,25,north\n${"P".repeat(300)},41,M,26,south\n`;
    const id = await sendAndWait(rows);
    expect(await view(id)).toMatchObject({ status: "done", total: 2, failed: 1 });
    const lines = (await resultsText(id)).trimEnd().split("\n");
    expect(lines[2]).toBe('row 3,,,,,"the id in column “patient_id” is 300 characters long, more than the 256 an id may have"');
  });

  async function sendAndWait(body: string) {
    const id = await send(1, "text/csv", body);
    await finished(id);
    return id;
  }

  it("finding 4: results.csv is bounded by the file sent: refused at once when even empty lines would pass the bound", () => {
    const manifest = JSON.parse(
      fs.readFileSync(path.join(servingFixtures().modelDir("tabular_binary"), "manifest.json"), "utf8"),
    ) as ServedManifest;
    const shape = { images: false, overlays: false };
    expect(() => ResultsFile.refuseEarly(manifest, shape, 1_000_000, 100_000)).not.toThrow();
    expect(() => ResultsFile.refuseEarly(manifest, shape, 1_000_000, 20_000_000)).toThrow(
      /^results\.csv would be larger than 32 MiB, the most one batch writes for a file of 977 KiB \(16 times its size, at least 32 MiB\)/,
    );
  });

  it("finding 4: one user's three large files do not hold another user's small one behind them", async () => {
    // Large for this server (BATCH_MAX_CELLS is small here): the first user's files run one after another.
    const large = patientsCsv(Math.floor(MAX_CELLS / 6));
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push(await send(1, "text/csv", large));
    const theirs = await send(1, "text/csv", patientsCsv(10), other);
    const small = await finished(theirs, other);
    expect(small.status).toBe("done");
    const done = await Promise.all(mine.map((id) => finished(id)));
    expect(done.map((b) => b.status)).toEqual(["done", "done", "done"]);
    // the small batch did not wait for the first user's second and third files
    expect(Date.parse(small.finished_at!)).toBeLessThan(Date.parse(done[1]!.finished_at!));
  });

  it("finding 5: a CSV with a 20 MB line is refused at the 1 MiB row cap, naming the line", async () => {
    const file = path.join(tmp, "long-line.csv");
    csvWithLongLine(file, 20 * 1024 * 1024);
    const b = await finished(await send(1, "text/csv", fs.readFileSync(file)));
    expect(b.status).toBe("failed");
    expect(b.failure_reason).toBe(
      "the row on line 3 is longer than 1 MiB, the most one row of a table may hold: is the file a table saved as CSV?",
    );
  });

  it("finding 6: an id that a ';' locale would split into a formula is written whole and inert in results.csv", async () => {
    const id = await sendAndWait("patient_id,age,sex,bmi,site\nx;=1+1;,40,F,25,north\n@SUM(1),41,M,26,south\n");
    const lines = (await resultsText(id)).trimEnd().split("\n");
    expect(lines[1]!.startsWith(`"'x;=1+1;",`)).toBe(true);
    expect(lines[2]!.startsWith(`'@SUM(1),`)).toBe(true);
  });

  it("finding 14: a stray quote is read as text; a quote that never closes names its line, in Spanish too", async () => {
    const stray = await sendAndWait('patient_id,age,sex,bmi,site\nP1,40,F,25,north\nP2,4"1,M,26,south\nP3,42,F,27,east\n');
    expect(await view(stray)).toMatchObject({ status: "done", total: 3, failed: 1 });
    expect((await resultsText(stray)).trimEnd().split("\n")[2]).toBe("P2,,,,,age: not a number");

    const open = await sendAndWait('patient_id,age,sex,bmi,site\nP1,40,F,25,north\nP2,"41,M,26,south\nP3,42,F,27,east\n');
    expect((await view(open)).failure_reason).toBe(
      'line 3 opens a value with a quote (") that never closes, so the rest of the file would be read as that one value: close the quote, or remove it',
    );
    expect((await view(open, user, "es")).failure_reason).toBe(
      'la línea 3 abre un valor con una comilla (") que nunca se cierra, así que el resto del archivo se leería como ese único valor: cierre la comilla o quítela',
    );
    const afterQuote = await finished(await send(1, "text/csv", 'patient_id,age,sex,bmi,site\nP1,"4"0,F,25,north\n'));
    expect(afterQuote.failure_reason).toBe(
      "line 2, column 2 (“age”): a quoted value has more text after its closing quote; put the whole value inside the quotes",
    );
  });

  it("finding 14: a zip entry named '../' is refused naming the entry, in English and in Spanish", async () => {
    const png = fs.readFileSync(path.join(servingFixtures().dir, "images", "rgb.png"));
    const id = await send(2, "application/zip", makeZip({ "scans/ok.png": png, "../evil.png": png }));
    const b = await finished(id);
    expect(b.status).toBe("failed");
    expect(b.failure_reason).toBe("the zip entry '../evil.png' points outside the archive ('..'); it was refused");
    expect((await view(id, user, "es-ES,es;q=0.9")).failure_reason).toBe(
      "la entrada del zip '../evil.png' apunta fuera del archivo ('..'); se rechazó",
    );
  });
});
