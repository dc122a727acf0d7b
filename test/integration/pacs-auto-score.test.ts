import fs from "node:fs";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom } from "../helpers/breastmnist-dicom.js";
import { primaryTarget } from "../helpers/db.js";
import { haveOrthanc, startOrthanc, type StoredInstance, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { startServer, type RunningServer } from "../../src/server.js";

// Scoring new studies as they arrive (issue 51 item 4) with a real Orthanc: a model's rule on, an instance stored in
// the PACS gets its SR from the poller (Orthanc's /changes feed) within the stated time; a Builder stopped while
// instances arrive scores them when it is back (nothing lost), and a Builder killed after the SR was sent but before its
// cursor moved sends it again with the same UIDs, so the study holds exactly one SR (nothing duplicated).
const SR = "1.2.840.10008.5.1.4.1.1.88.33";
/** The stated time (docs/pacs.md): one poll interval (here 100 ms) plus a prediction and a STOW-RS; generous for CI. */
const WITHIN_MS = 60_000;

describe.skipIf(!haveFixturePython || !haveOrthanc)("scoring new PACS studies as they arrive", () => {
  const fx = servingFixtures();
  let first: TestServer;
  let server: RunningServer;
  let orthanc: TestOrthanc;
  let user: UserWithKey;

  const restart = async (pollMs: number) => {
    await server.stop();
    server = await startServer({ ...first.services.config, PACS_AUTO_SCORE_POLL_MS: pollMs }, { port: 0, host: "127.0.0.1" });
  };
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: bearer(user.key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const srs = async (s: StoredInstance) => (await orthanc.studyFiles(s.study)).filter((f) => f.sopClass === SR);
  /** Waits until the study holds an SR (or the stated time passes), then lets the poller finish its tick. */
  const srWithin = async (s: StoredInstance) => {
    const deadline = Date.now() + WITHIN_MS;
    while (!(await srs(s)).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await server.services.pacsAutoScore.tick();
    return srs(s);
  };

  beforeAll(async () => {
    orthanc = await startOrthanc();
    first = await startTestServer(primaryTarget(), {
      FETCH_ALLOW_HOSTS: "127.0.0.1",
      GRADCAM_MAX_SIDE: "64",
      PACS_RETRY_BASE_MS: "1",
      PACS_AUTO_SCORE_POLL_MS: "100",
      PACS_AUTO_SCORE_LEASE_MS: "1000",
    });
    server = first;
    user = await createUserWithKey(first);
    await publishFixture(first, user.userId, 1, fx.modelDir("vision_binary"));
    expect(
      (await api("PUT", "/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password })).status,
    ).toBe(200);
  });
  afterAll(async () => {
    if (server && server !== first) await server.stop();
    await first?.teardown();
    await orthanc?.stop();
  });

  it("saves the rule, refuses an unknown model, and scores nothing the rule does not match", async () => {
    expect((await api("GET", "/v1/models/1/pacs/auto-score")).body).toEqual({
      enabled: false,
      modality: null,
      body_part: null,
      series_description: null,
      recent: [],
    });
    expect((await api("PUT", "/v1/models/99/pacs/auto-score", { enabled: true })).status).toBe(404);
    // A rule for another modality: an ultrasound image stored now is left alone.
    expect((await api("PUT", "/v1/models/1/pacs/auto-score", { enabled: true, modality: "MG" })).body).toMatchObject({ modality: "MG" });
    const other = await orthanc.store((await breastMnistDicom(10)).bytes);
    await server.services.pacsAutoScore.tick();
    expect(await srs(other)).toHaveLength(0);
    const on = await api("PUT", "/v1/models/1/pacs/auto-score", { enabled: true, modality: " us " });
    expect(on.body).toEqual({ enabled: true, modality: "us", body_part: null, series_description: null });
  });

  it("writes the SR of an instance stored while the rule is on, once", async () => {
    const s = await orthanc.store((await breastMnistDicom(11)).bytes);
    expect(await srWithin(s)).toHaveLength(1);
    const recent = (await api("GET", "/v1/models/1/pacs/auto-score")).body.recent;
    expect(recent).toEqual([expect.objectContaining({ sop_instance_uid: s.instance, outcome: "sent", reason: null })]);
    // Builder's own SR arrived on the feed too, and was not scored.
    await server.services.pacsAutoScore.tick();
    expect((await api("GET", "/v1/models/1/pacs/auto-score")).body.recent).toHaveLength(1);
  });

  it("scores an instance stored while Builder is down when it is back", async () => {
    await server.stop();
    const s = await orthanc.store((await breastMnistDicom(12)).bytes);
    server = await startServer({ ...first.services.config }, { port: 0, host: "127.0.0.1" });
    expect(await srWithin(s)).toHaveLength(1);
  });

  it("a kill after the SR was sent but before its cursor moved neither loses nor duplicates it", async () => {
    const s = await orthanc.store((await breastMnistDicom(13)).bytes);
    expect(await srWithin(s)).toHaveLength(1);
    // What a kill -9 between the STOW-RS and the commit leaves: the SR in the PACS, the cursor before the instance's
    // change and no outcome written. Written with the poller off, then Builder started again with it on.
    await restart(0);
    const db = server.services.db;
    const seq = (await (await orthanc.rest(`/changes?since=0&limit=1000`)).json()) as { Changes: { ID: string; Seq: number }[] };
    const change = seq.Changes.find((c) => c.ID === s.orthancId)!;
    await db.execute(sql`update pacs_feed_cursors set last_seq = ${change.Seq - 1}, lease_owner = null`);
    await db.execute(sql`delete from pacs_auto_scored where sop_instance_uid = ${s.instance}`);
    await restart(100);
    const deadline = Date.now() + WITHIN_MS;
    const scored = async () =>
      ((await api("GET", "/v1/models/1/pacs/auto-score")).body.recent as any[]).filter((r) => r.sop_instance_uid === s.instance);
    while (!(await scored()).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await scored()).toEqual([expect.objectContaining({ outcome: "sent" })]);
    expect(await srs(s)).toHaveLength(1);
  });

  it("shows a failure on the rule's outcomes and in the audit log", async () => {
    // The model's files gone from the data folder's bucket (a fresh process: none cached): the prediction fails, and
    // says so.
    await restart(0);
    fs.rmSync(`${first.dataDir}/bucket`, { recursive: true, force: true });
    await restart(100);
    const s = await orthanc.store((await breastMnistDicom(14)).bytes);
    const deadline = Date.now() + WITHIN_MS;
    const failed = async () =>
      ((await api("GET", "/v1/models/1/pacs/auto-score")).body.recent as any[]).filter((r) => r.sop_instance_uid === s.instance);
    while (!(await failed()).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await failed()).toEqual([expect.objectContaining({ outcome: "failed", reason: expect.stringMatching(/prediction failed/) })]);
    // The reason is kept in catalog words: a Spanish reader gets it in Spanish, the model's error nested in it too.
    const spanish = await fetch(`${server.url}/v1/models/1/pacs/auto-score`, { headers: bearer(user.key, { "accept-language": "es" }) });
    const inSpanish = ((await spanish.json()) as any).recent.find((r: any) => r.sop_instance_uid === s.instance);
    expect(inSpanish.reason).toMatch(/^la predicción falló: /);
    expect(inSpanish.reason).not.toMatch(/prediction failed/);
    const audit = ((await api("GET", "/v1/audit?limit=100")).body.data as any[]).filter((e) => e.action === "pacs_send_failed");
    expect(audit.some((e) => e.details.auto_score === true)).toBe(true);
  });
});
