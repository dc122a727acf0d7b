import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import yauzl from "yauzl";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { overlayPng } from "../../src/batches/overlays.js";
import { camSize } from "../../src/serving/postprocess.js";

// Issue 38 item 3, the rest of batch scoring, against a real server and the serving fixtures' ONNX models:
// - GET /v1/batches/{id}/events: progress as the batch runs, then `done`, then the stream ends; its slots are the
//   experiments' streams' slots (EVENT_STREAMS_PER_USER, 429 too_many_streams past it);
// - ?overlays=true: overlays.zip, one PNG per image named as the image, the map /predict gives for its predicted
//   class over it, while results.csv keeps /predict's scores;
// - detection: results.csv has one line per box, each /predict's box.

vi.setConfig({ testTimeout: 120_000 });

const CAP = 3;

interface SseEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/** Reads a whole events stream (it must end by itself within `ms`) into its events. */
async function readEvents(res: Response, ms = 60_000): Promise<SseEvent[]> {
  const text = await Promise.race([
    res.text(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the stream did not end")), ms)),
  ]);
  return text
    .split("\n\n")
    .filter((block) => block.trim() && !block.startsWith(":"))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      return { event: field("event") ?? "message", id: field("id"), data: JSON.parse(field("data") ?? "{}") as Record<string, unknown> };
    });
}

function parseCsv(text: string): string[][] {
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

/** A zip's entries, name -> bytes. */
async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))),
  );
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.on("end", resolve);
    zip.on("error", reject);
    zip.readEntry();
  });
  return out;
}

function patientsCsv(n: number): string {
  const lines = ["patient_id,age,sex,bmi,site"];
  for (let i = 0; i < n; i++) lines.push(`P${i},${20 + (i % 70)},${i % 2 ? "M" : "F"},${(18 + (i % 30)).toFixed(1)},north`);
  return lines.join("\n") + "\n";
}

describe.skipIf(!haveFixturePython)("batch scoring: events stream, Grad-CAM overlays, detection boxes", () => {
  let server: TestServer;
  let user: UserWithKey;
  const images = path.join(servingFixtures().dir, "images");
  const image = (n: string) => fs.readFileSync(path.join(images, n));
  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { EVENT_STREAMS_PER_USER: String(CAP), BATCH_OVERLAYS_MAX_IMAGES: "5" });
    user = await createUserWithKey(server);
    const fx = servingFixtures();
    await publishFixture(server, user.userId, 1, fx.modelDir("tabular_binary"));
    await publishFixture(server, user.userId, 2, fx.modelDir("vision_binary"));
    await publishFixture(server, user.userId, 3, fx.modelDir("detection"));
  }, 180_000);
  afterAll(() => server?.teardown());

  const get = (p: string, key = user.key) => fetch(`${server.url}${p}`, { headers: bearer(key) });
  const send = async (experimentId: number, contentType: string, body: Buffer | string, query = "") => {
    const res = await fetch(`${server.url}/v1/models/${experimentId}/batch${query}`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": contentType }),
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const predict = async (experimentId: number, message: unknown) => {
    const res = await fetch(`${server.url}/v1/experiments/${experimentId}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, any>;
  };
  const dataUri = (bytes: Buffer) => `data:image/png;base64,${bytes.toString("base64")}`;

  it("the events stream sends progress (done of total, status) as the batch runs, then done, then ends", async () => {
    // The first batch holds the queue (batches run one at a time), so the second is seen queued, then running. Both
    // last several of the hub's 500 ms polls even on a quiet machine (about 9,000 rows/s): with 3,000 rows each,
    // a fresh-clone run saw the second one finish between two polls, never "running".
    const ROWS = 20_000;
    const first = await send(1, "text/csv", patientsCsv(30_000));
    const second = await send(1, "text/csv", patientsCsv(ROWS));
    expect([first.status, second.status]).toEqual([202, 202]);
    const res = await get(`/v1/batches/${second.body.batch_id}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);

    const progress = events.filter((e) => e.event === "progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]!.data).toMatchObject({ batch_id: second.body.batch_id, status: "queued", done: 0 });
    const running = progress.filter((e) => e.data.status === "running");
    expect(running.length).toBeGreaterThanOrEqual(1);
    // the total is known from the start of the run, and done only grows
    for (const e of running) expect(e.data.total).toBe(ROWS);
    const dones = progress.map((e) => e.data.done as number);
    expect([...dones].sort((a, b) => a - b)).toEqual(dones);
    // ids grow, so a browser's EventSource reconnect is harmless
    const ids = events.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    const last = events.at(-1)!;
    expect(last.event).toBe("done");
    expect(last.data).toMatchObject({ status: "done", total: ROWS, done: ROWS, failed: 0 });
    expect(last.data.results_url).toBe(`/v1/batches/${second.body.batch_id}/results.csv`);
    expect(events.filter((e) => e.event === "done")).toHaveLength(1);

    // A finished batch's stream is its final event at once, then the end.
    const again = await readEvents(await get(`/v1/batches/${second.body.batch_id}/events`), 10_000);
    expect(again.map((e) => e.event)).toEqual(["done"]);
    // a failed batch ends with failed and its reason
    const bad = await send(1, "text/csv", "patient_id,age\nP1,40\n");
    const failed = await readEvents(await get(`/v1/batches/${bad.body.batch_id}/events`));
    expect(failed.at(-1)).toMatchObject({ event: "failed", data: { status: "failed" } });
    expect(String(failed.at(-1)!.data.failure_reason)).toMatch(/no column/);
  });

  it("batch streams count against EVENT_STREAMS_PER_USER with experiments' streams: 429 too_many_streams past the cap", async () => {
    // A batch that stays queued behind a long one keeps its streams open.
    const long = await send(1, "text/csv", patientsCsv(20_000));
    const waiting = await send(1, "text/csv", patientsCsv(10));
    const open: AbortController[] = [];
    for (let i = 0; i < CAP; i++) {
      const abort = new AbortController();
      const res = await fetch(`${server.url}/v1/batches/${waiting.body.batch_id}/events`, {
        headers: bearer(user.key),
        signal: abort.signal,
      });
      expect(res.status).toBe(200);
      open.push(abort);
    }
    const over = await get(`/v1/batches/${waiting.body.batch_id}/events`);
    expect(over.status).toBe(429);
    const body = (await over.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("too_many_streams");
    expect(body.error.message).toMatch(/already have 3 event streams open/);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    // the same slots as an experiment's events stream
    expect((await get(`/v1/experiments/1/events`)).status).toBe(429);
    // another user's batch is a 404, not a 429 or a stream
    const other = await createUserWithKey(server, { email: "other-streams@hospital.example" });
    expect((await get(`/v1/batches/${waiting.body.batch_id}/events`, other.key)).status).toBe(404);

    for (const a of open) a.abort();
    // The server hears the closes asynchronously: a slot comes back.
    let reopened = 429;
    for (let i = 0; i < 100 && reopened !== 200; i++) {
      const res = await get(`/v1/batches/${waiting.body.batch_id}/events`);
      reopened = res.status;
      await res.body?.cancel();
      if (reopened !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(reopened).toBe(200);
    await readEvents(await get(`/v1/batches/${long.body.batch_id}/events`), 110_000);
  });

  it("?overlays=true: overlays.zip has one PNG per image, named as the image, with /predict's map of the predicted class; results.csv keeps /predict's scores", async () => {
    const names = ["scans/rgb.png", "scans/grey.jpg", "scans/tall.png", "rgb.jpg", "rgb.png"];
    const files: Record<string, string> = {
      "scans/rgb.png": "rgb.png",
      "scans/grey.jpg": "grey.jpg",
      "scans/tall.png": "tall.png",
      "rgb.jpg": "rgb.jpg",
      "rgb.png": "rgb.png",
    };
    const zip = makeZip({ "notes.txt": "not an image", ...Object.fromEntries(names.map((n) => [n, image(files[n]!)])) });
    const sent = await send(2, "application/zip", zip, `?overlays=true&file_name=${encodeURIComponent("scans (ward 3).zip")}`);
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ overlays: true, overlays_url: null, file_name: "scans (ward 3).zip" });
    const events = await readEvents(await get(`/v1/batches/${sent.body.batch_id}/events`));
    const done = events.at(-1)!;
    expect(done).toMatchObject({ event: "done", data: { status: "done", total: 5, done: 5, failed: 0, overlays: true } });
    expect(done.data.overlays_url).toBe(`/v1/batches/${sent.body.batch_id}/overlays.zip`);

    const [header, ...lines] = parseCsv(await (await get(`/v1/batches/${sent.body.batch_id}/results.csv`)).text());
    expect(header).toEqual([
      "image",
      "prediction",
      "score_vision_binary-class-0",
      "score_vision_binary-class-1",
      "overlay",
      "overlay_class",
      "error",
    ]);
    // rgb.jpg and rgb.png would both be rgb.png: the second keeps its extension in the name
    const expectedNames = ["scans/rgb.png", "scans/grey.png", "scans/tall.png", "rgb.png", "rgb.png.png"];
    expect(lines.map((l) => l[4])).toEqual(expectedNames);

    const res = await get(`/v1/batches/${sent.body.batch_id}/overlays.zip`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toContain("overlays.zip");
    const entries = await unzip(Buffer.from(await res.arrayBuffer()));
    expect([...entries.keys()]).toEqual(expectedNames);

    for (const [i, n] of names.entries()) {
      const bytes = image(files[n]!);
      const p = await predict(2, dataUri(bytes));
      const line = lines[i]!;
      expect(line[0]).toBe(n);
      expect(line.slice(2, 4).map(Number)).toEqual(p.score);
      const predicted = Object.keys(p.gradients as object)[0]!;
      expect(line[5]).toBe((p.classes as Record<string, string>)[predicted]);
      expect(line[1]).toBe((p.classes as Record<string, string>)[predicted]);

      const png = entries.get(expectedNames[i]!)!;
      const meta = await sharp(png).metadata();
      const orig = await sharp(bytes).metadata();
      expect(meta.format).toBe("png");
      expect({ w: meta.width, h: meta.height }).toEqual({ w: p.columnas, h: p.filas });
      expect({ w: meta.width, h: meta.height }).toEqual(
        (({ columnas, filas }) => ({ w: columnas, h: filas }))(camSize(orig.width!, orig.height!, server.services.config.GRADCAM_MAX_SIDE)),
      );
      // the picture is /predict's map of the predicted class over the image, pixel for pixel
      const expected = await overlayPng(bytes, { columnas: p.columnas, filas: p.filas }, p.gradients[predicted], 1e8);
      const [got, want] = await Promise.all([sharp(png).raw().toBuffer(), sharp(expected).raw().toBuffer()]);
      expect(got.equals(want)).toBe(true);
      // and the map shows: the overlay is not the plain image
      const plain = await sharp(bytes).resize(p.columnas, p.filas, { fit: "fill" }).removeAlpha().toColourspace("srgb").raw().toBuffer();
      expect(got.equals(plain)).toBe(false);
    }
  });

  it("overlays are refused in words: a table or detection model, more images than BATCH_OVERLAYS_MAX_IMAGES, a batch sent without them", async () => {
    const table = await send(1, "text/csv", patientsCsv(2), "?overlays=true");
    expect(table.status).toBe(400);
    expect(table.body.error.message).toMatch(/table model/);
    const detection = await send(3, "application/zip", makeZip({ "a.png": image("rgb.png") }), "?overlays=true");
    expect(detection.status).toBe(400);
    expect(detection.body.error.message).toMatch(/one line per box/);
    const many = await send(
      2,
      "application/zip",
      makeZip(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`p${i}.png`, image("rgb.png")]))),
      "?overlays=true",
    );
    expect(many.status).toBe(413);
    expect(many.body.error).toMatchObject({ code: "too_many_images" });
    expect(many.body.error.message).toMatch(/6 images; a batch with overlays takes at most 5/);

    const plain = await send(2, "application/zip", makeZip({ "a.png": image("rgb.png") }));
    expect(plain.body).toMatchObject({ overlays: false, file_name: null });
    expect((await send(2, "application/zip", makeZip({ "a.png": image("rgb.png") }), "?file_name=a%0Ab.zip")).status).toBe(400);
    await readEvents(await get(`/v1/batches/${plain.body.batch_id}/events`));
    expect((await get(`/v1/batches/${plain.body.batch_id}/overlays.zip`)).status).toBe(404);
    const [header] = parseCsv(await (await get(`/v1/batches/${plain.body.batch_id}/results.csv`)).text());
    expect(header).not.toContain("overlay");
  });

  it("detection: results.csv has one line per box (class, score, corners), each /predict's box; an image without a box has one line", async () => {
    const blank = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 0, g: 0, b: 0 } } })
      .png()
      .toBuffer();
    const inputs: Record<string, Buffer> = { "a.png": image("rgb.png"), "b.jpg": image("rgb.jpg"), "c.png": blank };
    const sent = await send(3, "application/zip", makeZip(inputs));
    const events = await readEvents(await get(`/v1/batches/${sent.body.batch_id}/events`));
    expect(events.at(-1)).toMatchObject({ event: "done", data: { total: 3, done: 3, failed: 0 } });
    const [header, ...lines] = parseCsv(await (await get(`/v1/batches/${sent.body.batch_id}/results.csv`)).text());
    expect(header).toEqual(["image", "box", "class", "score", "x_min", "y_min", "x_max", "y_max", "error"]);
    let at = 0;
    for (const [name, bytes] of Object.entries(inputs)) {
      const p = await predict(3, dataUri(bytes));
      const boxes = p.boxes as number[][];
      if (boxes.length === 0) {
        expect(lines[at++]).toEqual([name, "0", "", "", "", "", "", "", ""]);
        continue;
      }
      for (const [k, b] of boxes.entries()) {
        const line = lines[at++]!;
        expect(line.slice(0, 3)).toEqual([name, String(k + 1), (p.classes as Record<string, string>)[String(p.classification[k])]]);
        expect(line.slice(3, 8).map(Number)).toEqual([p.score[k], ...b]);
        expect(line[8]).toBe("");
      }
    }
    expect(at).toBe(lines.length);
    expect(lines.filter((l) => l[0] === "a.png").length).toBeGreaterThan(0);
  });
});
