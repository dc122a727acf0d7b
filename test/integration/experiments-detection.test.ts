import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { contractErrors } from "../../src/contract/validate.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 7's "Done when": a generated detection dataset (bright rectangles and circles on noise, boxes known, the
// TypeScript twin of pipelines/tests/detection_synthetic.py) zipped in each input layout (CSV rows per box,
// Pascal VOC XML, COCO JSON), uploaded and trained through the HTTP API to `ready` with a test mAP@0.5 well above
// chance, then one /predict on the published model.
//
// Threshold mAP@0.5 >= 0.5. Chance is near 0: a box must overlap a true box with IoU >= 0.5 and carry its class,
// and these objects cover ~1-3 % of the image each, so boxes placed at random hit almost never; a detector that
// found every object but guessed the class at random would score about 0.5 only with perfect localisation.
// The pipeline's own test reaches > 0.7 on the same kind of data in 45 s; here 45 s on a shared 2-core host (30 s
// gave 2 epochs and mAP 0.16 when the host was loaded: a first epoch of 9 s instead of 2-3 s).

vi.setConfig({ testTimeout: 300_000 });

const SIZE = 64;
const CLASSES = ["circle", "rect"] as const; // sorted: class index 0 = circle, 1 = rect
const COLOURS = { rect: [230, 230, 90], circle: [90, 220, 230] } as const;
type Box = { cls: (typeof CLASSES)[number]; x1: number; y1: number; x2: number; y2: number };

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** RGB noise (mean 60) with filled shapes drawn inside `boxes` (half-open pixel boxes). */
async function drawScene(width: number, height: number, boxes: Box[], rand: () => number): Promise<Buffer> {
  const px = Buffer.alloc(width * height * 3);
  for (let i = 0; i < px.length; i++) px[i] = Math.max(0, Math.min(255, Math.round(60 + (rand() + rand() + rand() - 1.5) * 40)));
  for (const b of boxes) {
    const cx = (b.x1 + b.x2 - 1) / 2,
      cy = (b.y1 + b.y2 - 1) / 2,
      rx = (b.x2 - b.x1) / 2,
      ry = (b.y2 - b.y1) / 2;
    for (let y = b.y1; y < b.y2; y++) {
      for (let x = b.x1; x < b.x2; x++) {
        if (b.cls === "circle" && ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 > 1) continue;
        px.set(COLOURS[b.cls], (y * width + x) * 3);
      }
    }
  }
  return sharp(px, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

interface Scene {
  name: string;
  png: Buffer;
  boxes: Box[];
}

/** 72 images of 64x64, 0-3 non-overlapping objects each (image 0 has none), seeded. */
async function scenes(n = 72, seed = 1): Promise<Scene[]> {
  const rand = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
  const out: Scene[] = [];
  for (let i = 0; i < n; i++) {
    const boxes: Box[] = [];
    const want = i === 0 ? 0 : int(1, 4);
    for (let k = 0; k < want; k++) {
      for (let attempt = 0; attempt < 20; attempt++) {
        const w = int(SIZE / 6, SIZE / 2.6),
          h = int(SIZE / 6, SIZE / 2.6);
        const x1 = int(0, SIZE - w),
          y1 = int(0, SIZE - h);
        const b: Box = { cls: rand() < 0.5 ? "rect" : "circle", x1, y1, x2: x1 + w, y2: y1 + h };
        if (boxes.every((p) => b.x2 <= p.x1 || p.x2 <= b.x1 || b.y2 <= p.y1 || p.y2 <= b.y1)) {
          boxes.push(b);
          break;
        }
      }
    }
    out.push({ name: `img${String(i).padStart(3, "0")}`, png: await drawScene(SIZE, SIZE, boxes, rand), boxes });
  }
  return out;
}

function csvZip(data: Scene[]): Buffer {
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,image,shape,x1,y1,x2,y2"];
  for (const s of data) {
    files[`images/${s.name}.png`] = s.png;
    if (!s.boxes.length) rows.push(`p_${s.name},images/${s.name}.png,,,,,`);
    for (const b of s.boxes) rows.push(`p_${s.name},images/${s.name}.png,${b.cls},${b.x1},${b.y1},${b.x2},${b.y2}`);
  }
  files["boxes.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}

function vocZip(data: Scene[]): Buffer {
  const files: Record<string, Buffer | string> = {};
  for (const s of data) {
    files[`VOC/JPEGImages/${s.name}.png`] = s.png;
    const objects = s.boxes.map(
      (b) =>
        `<object><name>${b.cls}</name><bndbox><xmin>${b.x1}</xmin><ymin>${b.y1}</ymin><xmax>${b.x2}</xmax><ymax>${b.y2}</ymax></bndbox></object>`,
    );
    files[`VOC/Annotations/${s.name}.xml`] =
      `<annotation><filename>${s.name}.png</filename><size><width>${SIZE}</width><height>${SIZE}</height><depth>3</depth></size>${objects.join("")}</annotation>\n`;
  }
  return makeZip(files);
}

function cocoZip(data: Scene[]): Buffer {
  const files: Record<string, Buffer | string> = {};
  const coco = { images: [] as object[], annotations: [] as object[], categories: CLASSES.map((name, i) => ({ id: i + 1, name })) };
  data.forEach((s, i) => {
    files[`images/${s.name}.png`] = s.png;
    coco.images.push({ id: i + 1, file_name: `${s.name}.png`, width: SIZE, height: SIZE });
    for (const b of s.boxes) {
      coco.annotations.push({
        id: coco.annotations.length + 1,
        image_id: i + 1,
        category_id: CLASSES.indexOf(b.cls) + 1,
        bbox: [b.x1, b.y1, b.x2 - b.x1, b.y2 - b.y1],
      });
    }
  });
  files["annotations/instances.json"] = JSON.stringify(coco);
  return makeZip(files);
}

const iou = (a: number[], b: number[]) => {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])),
    ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
};

describe(`detection experiments through the API on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  let data: Scene[];
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
    client = api(server.url, user.key);
    data = await scenes();
  });
  afterAll(async () => {
    await server?.teardown();
  });

  const layouts = [
    { id: 1, layout: "csv", zip: csvZip, format: "csv" },
    { id: 2, layout: "voc", zip: vocZip, format: "voc" },
    { id: 3, layout: "coco", zip: cocoZip, format: "coco" },
  ] as const;

  it.each(layouts)("$layout layout trains to ready with mAP@0.5 >= 0.5", async ({ id, layout, zip, format }) => {
    const put = await fetch(`${server.url}/v1/files/${user.userId}/det-${layout}/shapes.zip`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body: zip(data),
    });
    expect(put.status).toBe(201);
    const post = await client.post("/v1/experiments", {
      zip_gcloud: `${user.userId}/det-${layout}/shapes.zip`,
      label_cols: ["shape"],
      images_col: "image",
      model_type: 0,
      optimization_type: 1,
      experiment_id: id,
      user_id: user.userId,
      study_type: "Builder",
      task: "vision",
      type_of_experiment: "detection",
      optimization_metric: "F-macro",
      time_budget_s: 45,
    });
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, id, ["ready", "failed", "invalid_dataset"], 280_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.dataset_report.summary.format).toBe(format);
    expect(done.model.kind).toBe("detection");
    const map50 = done.metrics.map50;
    expect(map50.ci_low).toBeLessThanOrEqual(map50.value);
    expect(map50.ci_high).toBeGreaterThanOrEqual(map50.value);
    // On failure, the pipeline's own lines (epochs planned from the first epoch's time, validation mAP) say why.
    const log = String((await client.get(`/v1/experiments/${id}/logs`)).body)
      .split("\n")
      .filter((l) => l.includes("pipeline"))
      .join("\n");
    expect(map50.value, `test mAP@0.5 of the ${layout} run; pipeline log:\n${log.slice(-2500)}`).toBeGreaterThanOrEqual(0.5);
    expect(done.metrics.map50_95.value).toBeGreaterThan(0);
    const manifest = (await server.services.serving.repo.latest(user.userId, id))!.manifest;
    expect(contractErrors("manifest", manifest)).toEqual([]);
    expect((manifest as any).classes.map((c: { name: string }) => c.name)).toEqual([...CLASSES]);
  });

  it("/predict on the published model answers boxes in the original image's pixels", async () => {
    // A larger, non-square image than the training ones (128x96): the served boxes must come back in its pixels,
    // so the letterbox/resize is undone. One rectangle twice the training objects' typical size.
    const truth: Box = { cls: "rect", x1: 50, y1: 30, x2: 86, y2: 62 };
    const png = await drawScene(128, 96, [truth], rng(99));
    const res = await fetch(`${server.url}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ experiment_id: 1, message: `data:image/png;base64,${png.toString("base64")}` }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(201);
    expect(body.error).toBe(0);
    expect(Object.values(body.classes)).toEqual([...CLASSES]);
    expect(body.boxes.length).toBeGreaterThan(0);
    expect(body.score).toHaveLength(body.boxes.length);
    expect(body.classification).toHaveLength(body.boxes.length);
    for (const b of body.boxes) {
      expect(b[0]).toBeGreaterThanOrEqual(0);
      expect(b[2]).toBeLessThanOrEqual(128);
      expect(b[3]).toBeLessThanOrEqual(96);
    }
    const best = body.boxes.map((b: number[], i: number) => ({
      iou: iou(b, [truth.x1, truth.y1, truth.x2, truth.y2]),
      cls: body.classification[i],
    }));
    expect(best.some((m: { iou: number; cls: number }) => m.iou >= 0.5 && m.cls === CLASSES.indexOf("rect"))).toBe(true);
  });
});
