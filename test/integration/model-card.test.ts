import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { pageSecurityHeaders } from "../../src/http/page-security.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { api, dataRequest, diagnosisRows, startExperimentServer, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 37 item 8: the model card of a model built by the real Python pipeline, as JSON and as report.html. The
// dataset is hostile on purpose: a column and both class names are HTML, and the team's name, description and
// intended use carry quotes and script tags; the page must show them as text. Patient ids (PT-...) and a
// categorical column's values (ward-...) must appear in neither form.

vi.setConfig({ testTimeout: 240_000 });

const HOSTILE_COLUMN = "<script>alert('col')</script>";
const HOSTILE_CLASS = "<img src=x onerror=alert(1)>";
const PLAIN_CLASS = "B&'benign'";
const NAME = `<script>alert("name")</script>`;
const DESCRIPTION = `"><svg onload=alert(1)>`;
const INTENDED_USE = `Second reader for breast masses in adults.\n</div><script>alert('use')</script> & "quoted"`;

function hostileCsv(): { csv: string; dataCols: string[] } {
  const rows = diagnosisRows(240, 11, { name: "center", value: (i) => (i % 2 ? "ward-north" : "ward-south") });
  const [, ...body] = rows;
  const header = `id,diagnosis,f1,${HOSTILE_COLUMN},center`;
  const lines = body.map((line) => {
    const [id, y, ...rest] = line.split(",");
    return [`PT-${id}`, y === "M" ? HOSTILE_CLASS : PLAIN_CLASS, ...rest].join(",");
  });
  return { csv: [header, ...lines].join("\n") + "\n", dataCols: ["f1", HOSTILE_COLUMN, "center"] };
}

describe(`model card on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  let zipPath = "";
  let dataCols: string[] = [];

  beforeAll(async () => {
    ({ server, user, client } = await startExperimentServer());
    const data = hostileCsv();
    dataCols = data.dataCols;
    zipPath = `${user.userId}/hostile/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": data.csv })));
    expect((await client.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, dataCols))).status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
  }, 240_000);
  afterAll(async () => {
    await server?.teardown();
  });

  it("is 404 before the model exists and for another user's experiment; intended_use over 2000 characters is a 400 naming it", async () => {
    const other = await createUserWithKey(server);
    const stranger = api(server.url, other.key);
    for (const path of ["/v1/experiments/1/model-card", "/v1/experiments/1/report.html"]) {
      const res = await stranger.get(path);
      expect(res.status, path).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain("hostile");
    }
    expect((await client.get("/v1/experiments/99/model-card")).status).toBe(404);
    const long = await client.patch("/v1/experiments/1", { intended_use: "x".repeat(2001) });
    expect(long.status).toBe(400);
    expect(long.body.error.details).toContainEqual(
      expect.objectContaining({ field: "intended_use", message: "must be at most 2000 characters" }),
    );
  });

  it("PATCH intended_use is stored beside name and description and comes back on the experiment", async () => {
    const res = await client.patch("/v1/experiments/1", { name: NAME, description: DESCRIPTION, intended_use: INTENDED_USE });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: NAME, description: DESCRIPTION, intended_use: INTENDED_USE });
    // An absent field is kept; null clears only the one named.
    expect((await client.patch("/v1/experiments/1", { description: null })).body).toMatchObject({
      intended_use: INTENDED_USE,
      description: null,
    });
    expect((await client.patch("/v1/experiments/1", { description: DESCRIPTION })).status).toBe(200);
  });

  it("the JSON card has every TRIPOD+AI section, with the built model's own figures", async () => {
    const res = await client.get("/v1/experiments/1/model-card");
    expect(res.status).toBe(200);
    const card = res.body;
    const exp = (await client.get("/v1/experiments/1")).body;
    expect(card).toMatchObject({
      experiment_id: 1,
      title: NAME,
      description: DESCRIPTION,
      model_version: exp.model.version,
      intended_use: { text: INTENDED_USE },
    });
    // Data source: the file, when it was submitted, rows, patients and class counts from the dataset report.
    expect(card.data).toMatchObject({
      file_name: "data.zip",
      inputs: "table",
      label_columns: ["diagnosis"],
      rows: 240,
      patients: 240,
      images: null,
    });
    expect(card.data.submitted_at).toBe(new Date(exp.created_at).toISOString());
    expect(card.data.dataset_sha256).toMatch(/^[0-9a-f]{64}$/);
    const counts = card.data.class_counts.diagnosis;
    expect(Object.keys(counts).sort()).toEqual([HOSTILE_CLASS, PLAIN_CLASS].sort());
    expect(Object.values(counts as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(240);
    // The split: patients per part add up, rows match the manifest.
    const { train, validation, test } = card.split.patients;
    expect(train + validation + test).toBe(240);
    expect(card.split.method).toMatch(/by patient/);
    expect(card.preprocessing.columns.map((c: { name: string }) => c.name)).toEqual(dataCols);
    // The model and why it was chosen: the pipeline's own selection reason.
    const report = (await client.get("/v1/experiments/1/report")).body.report;
    expect(card.model.selection_reason).toBe(report.selection.reason);
    expect(card.model.family).toBe(report.model.model);
    // Performance at the operating point: the experiment's figures with intervals, and its confusion matrix.
    const byName = Object.fromEntries(card.performance.test.map((f: { name: string }) => [f.name, f]));
    for (const name of ["auc", "sensitivity", "specificity", "ppv", "npv"]) {
      expect(byName[name], name).toEqual({
        name,
        label: expect.any(String),
        value: exp.metrics[name].value,
        ci_low: exp.metrics[name].ci_low,
        ci_high: exp.metrics[name].ci_high,
      });
    }
    expect(byName.recall.label).toBe("Recall (macro average over classes)");
    expect(card.performance.positive_class).toEqual(exp.positive_class);
    expect(card.performance.confusion_matrix).toEqual(exp.confusion_matrix);
    expect(card.performance.confusion_matrix.counts.flat().reduce((a: number, b: number) => a + b, 0)).toBe(test);
    expect(card.performance.operating_point.chosen_on).toMatch(/validation/);
    expect(card.calibration.ece.value).toBe(exp.metrics.ece.value);
    // a binary model has a decision curve, and its slope is the experiment's (or empty where the scores separate)
    expect(card.calibration.decision_curve).toBe("decision_curve");
    expect(card.calibration.not_yet).not.toContain("a decision curve");
    expect(card.calibration.slope?.value ?? null).toBe(exp.metrics.calibration_slope?.value ?? null);
    // Warnings are the experiment's; the limitations name the internal split and recommend a Retrospective study.
    expect(card.warnings).toEqual(
      exp.warnings.map(({ code, severity, title, message }: Record<string, string>) => ({ code, severity, title, message })),
    );
    expect(card.limitations.join(" ")).toMatch(/same source.*internal split/);
    expect(card.limitations.join(" ")).toMatch(/another period or another site \(a Retrospective study/);
    expect(card.retrospective).toEqual([]);
    const json = JSON.stringify(card);
    expect(json).not.toContain("PT-");
    expect(json).not.toContain("ward-");
  });

  it("report.html is a self-contained page with the dashboard's headers, every user text escaped, no patient id", async () => {
    const res = await fetch(`${server.url}/v1/experiments/1/report.html`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    for (const [name, value] of Object.entries(pageSecurityHeaders())) expect(res.headers.get(name), name).toBe(value);
    const html = await res.text();
    // No script of any kind, no element a hostile value could have opened, nothing fetched: every tag is one the
    // page itself writes, and no tag carries an attribute other than class, scope, lang, charset, name, content, open or aria-label.
    expect(html).not.toMatch(/<script/i);
    const tags = new Set([...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1].toLowerCase()));
    const allowed = [
      "html",
      "head",
      "meta",
      "title",
      "style",
      "body",
      "header",
      "section",
      "main",
      "footer",
      "h1",
      "h2",
      "h3",
      "p",
      "b",
      "br",
      "code",
      "span",
      "div",
      "ul",
      "li",
      "table",
      "caption",
      "thead",
      "tbody",
      "tr",
      "th",
      "td",
      "details",
      "summary",
    ];
    expect([...tags].filter((t) => !allowed.includes(t))).toEqual([]);
    const attributes = new Set(
      [...html.matchAll(/<[a-zA-Z][a-zA-Z0-9]*((?:\s+[a-zA-Z-]+(?:="[^"]*")?)*)\s*>/g)].flatMap((m) =>
        [...m[1].matchAll(/\s+([a-zA-Z-]+)(?:="[^"]*")?/g)].map((a) => a[1]),
      ),
    );
    expect(
      [...attributes].filter((a) => !["class", "scope", "lang", "charset", "name", "content", "open", "aria-label"].includes(a)),
    ).toEqual([]);
    expect(html).toContain("Model card: &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;");
    expect(html).toContain("&quot;&gt;&lt;svg onload=alert(1)&gt;");
    expect(html).toContain(
      "Second reader for breast masses in adults.<br/>&lt;/div&gt;&lt;script&gt;alert(&#x27;use&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;",
    );
    expect(html).toContain("&lt;script&gt;alert(&#x27;col&#x27;)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("B&amp;&#x27;benign&#x27;");
    for (const heading of [
      "Intended use",
      "Data source and participants",
      "The split",
      "Preprocessing",
      "Model",
      "Performance on the test patients",
      "Calibration",
      "Warnings and limitations",
    ]) {
      expect(html, heading).toMatch(new RegExp(`<h2>\\d\\. ${heading}</h2>`));
    }
    expect(html).not.toContain("PT-");
    expect(html).not.toContain("ward-");
    // Nothing has been served yet: the Monitoring section says so, after what it watches and its thresholds.
    expect(html).toContain("<h2>9. Monitoring after deployment</h2>");
    expect(html).toContain("Nothing has been served yet");
    expect(res.headers.get("content-language")).toBe("en");
  });

  it("report.html in Spanish by ?lang=es or Accept-Language: es, the same escaping; an unknown ?lang= is a 400 naming it", async () => {
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/experiments/1/report.html${query}`, { headers: { authorization: `Bearer ${user.key}`, ...headers } });
    for (const res of [await get("?lang=es"), await get("", { "accept-language": "es-ES,es;q=0.9,en;q=0.5" })]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("content-language")).toBe("es");
      const html = await res.text();
      expect(html).toContain('<html lang="es">');
      expect(html).toContain("Ficha del modelo: &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;");
      expect(html).toContain("<h2>1. Uso previsto</h2>");
      expect(html).toContain("Sensibilidad (clase positiva)");
      expect(html).toContain("Todavía no se ha hecho ninguna predicción");
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toContain("PT-");
    }
    // ?lang= wins over the header (the dashboard's link passes the language the user chose).
    expect(await (await get("?lang=en", { "accept-language": "es" })).text()).toContain("<h2>1. Intended use</h2>");
    const bad = await get("?lang=fr");
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("lang");
  });

  it("a ready Retrospective study of the model is listed beside the internal figures", async () => {
    // Before any Retrospective study: the experiment says its figures come from an internal split and recommends one.
    const before = (await client.get("/v1/experiments/1")).body;
    expect(before.retrospective_studies).toEqual([]);
    const internal = before.warnings.find((w: { code: string }) => w.code === "internal_test_only");
    expect(internal).toMatchObject({ severity: "info", title: "internal test only" });
    expect(internal.message).toMatch(/test it on data from another period or site with a Retrospective study/);

    const body = dataRequest(user.userId, 2, zipPath, dataCols, { study_type: "Retrospective", source_experiment_id: 1 });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const retro = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(retro.failure_reason).toBeNull();
    // The study's own figures are on new data: no internal-split warning, and no list of studies of its own.
    expect(retro.warnings.map((w: { code: string }) => w.code)).not.toContain("internal_test_only");
    expect(retro.retrospective_studies).toBeUndefined();

    // The source experiment lists it beside its internal figures: AUC with its interval, patients tested, date.
    const after = (await client.get("/v1/experiments/1")).body;
    expect(after.retrospective_studies).toEqual([
      {
        experiment_id: 2,
        name: null,
        finished_at: retro.finished_at,
        patients: 240,
        figure: { name: "auc", value: retro.metrics.auc.value, ci_low: retro.metrics.auc.ci_low, ci_high: retro.metrics.auc.ci_high },
      },
    ]);
    expect(after.warnings.find((w: { code: string }) => w.code === "internal_test_only").message).toMatch(
      /One Retrospective study of this model on other data is shown beside these figures/,
    );
    // Another user sees neither the experiment nor its studies.
    const stranger = api(server.url, (await createUserWithKey(server)).key);
    expect((await stranger.get("/v1/experiments/1")).status).toBe(404);
    const card = (await client.get("/v1/experiments/1/model-card")).body;
    expect(card.retrospective).toHaveLength(1);
    expect(card.retrospective[0]).toMatchObject({ experiment_id: 2, file_name: "data.zip", patients: 240 });
    const auc = card.retrospective[0].test.find((f: { name: string }) => f.name === "auc");
    expect(auc).toMatchObject({ value: retro.metrics.auc.value, ci_low: retro.metrics.auc.ci_low });
    expect(card.limitations.join(" ")).toMatch(/Retrospective studies of this model on other data are listed/);
    expect(card.warnings.map((w: { code: string }) => w.code)).toContain("internal_test_only");
    const html = (await client.get("/v1/experiments/1/report.html")).body as string;
    expect(html).toContain("<h2>9. Retrospective results on other data</h2>");
    expect(html).toContain("Experiment #2");
    // The study's own card says it was not split: every patient was a test patient of experiment #1's model.
    const own = await client.get("/v1/experiments/2/model-card");
    expect(own.status).toBe(200);
    expect(own.body.split).toMatchObject({ internal: false, method: expect.stringMatching(/Retrospective study.*experiment #1/) });
    expect(own.body.limitations.join(" ")).not.toMatch(/internal split/);
    expect((await client.get("/v1/experiments/2/report.html")).body).toContain("Not split: a Retrospective study");
  });

  it.skipIf(!haveFixturePython)("an image model's card describes its preprocessing and its selection from the manifest", async () => {
    await publishFixture(server, user.userId, 50, servingFixtures().modelDir("vision_binary"));
    const res = await client.get("/v1/experiments/50/model-card");
    expect(res.status).toBe(200);
    const manifest = (await server.services.experiments.repo.latestModel(user.userId, 50))!.manifest as {
      input: { image: Record<string, unknown> };
    };
    expect(res.body.preprocessing.images).toMatchObject({
      width: manifest.input.image.width,
      height: manifest.input.image.height,
      channels: manifest.input.image.channels,
    });
    expect(res.body.preprocessing.description).toMatch(/^Each image is resized to \d+×\d+/);
    expect(res.body.data.inputs).toBe("images");
    expect(res.body.preprocessing.description).toContain(
      `normalised per channel (mean ${(manifest.input.image.mean as number[]).join(", ")}; standard deviation ${(manifest.input.image.std as number[]).join(", ")})`,
    );
    if (manifest.input.image.scale === 1 / 255) expect(res.body.preprocessing.description).toContain("scaled by 1/255");
    const html = (await client.get("/v1/experiments/50/report.html")).body as string;
    expect(html).toContain(`Each image is resized to ${manifest.input.image.width}×${manifest.input.image.height}`);
  });
});
