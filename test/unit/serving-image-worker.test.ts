import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { encodeJson } from "../../src/http/json-body.js";
import { OutboundRefusal } from "../../src/net/outbound-guard.js";
import { imageAnswer } from "../../src/serving/image-answer.js";
import { checkManifest, classNames } from "../../src/serving/manifest.js";
import { preprocessInline } from "../../src/serving/preprocess.js";
import { loadTurboJpeg } from "../../src/serving/jpeg-turbo.js";
import { openPredictor } from "../../src/serving/placement.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// A whole image prediction runs on one of the model's worker threads and comes back as JSON bytes. Those bytes
// must be the ones the same steps give on the calling thread (decode, Pillow-exact resize, normalise, run,
// maps/boxes, encodeJson), whichever thread answers, whether or not the answer's memory slot is handed back.
describe.skipIf(!haveFixturePython)("image predictions on the model's worker threads", () => {
  const opts = { maxPixels: 1e8, gradcamMaxSide: 512 };

  async function pair(name: string, jpegDecoder: "auto" | "sharp" = "auto") {
    const fx = servingFixtures();
    const dir = fx.modelDir(name);
    const manifest = checkManifest(JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")));
    const im = manifest.input.image!;
    const file = path.join(dir, "model.onnx");
    // One intra-op thread on both sides: ORT's sums are then the same run to run.
    const threads = await openPredictor(file, manifest, { intraOpThreads: 1, maxBatch: 1, threads: 2, jpegDecoder });
    // The reference runs the graph alone on one thread; its tensor comes from the calling thread.
    const plain = await openPredictor(file, manifest, { intraOpThreads: 1, maxBatch: 1, threads: 1 });
    const reference = async (bytes: Buffer) => {
      const pre = await preprocessInline(bytes, im, opts.maxPixels);
      const out = await plain.run(pre.tensor);
      return encodeJson(imageAnswer(manifest, classNames(manifest), out, pre, opts)).toString("utf8");
    };
    return { fx, threads, plain, reference };
  }

  it.each(["vision_binary", "vision_multilabel", "detection"])(
    "%s: the same bytes as on the calling thread, for every fixture image",
    async (name) => {
      const { fx, threads, plain, reference } = await pair(name);
      expect(threads.threads).toBe(2);
      for (const img of fx.images) {
        const bytes = fx.image(img);
        const expected = await reference(bytes);
        // Concurrent calls spread over both threads; half hand their slot back, half never do.
        const got = await Promise.all(Array.from({ length: 6 }, () => threads.predictImage(new Uint8Array(bytes), opts)));
        got.forEach((r, i) => {
          expect(Buffer.from(r.bytes).toString("utf8")).toBe(expected);
          if (i % 2) r.release!();
        });
      }
      await Promise.all([threads.close(), plain.close()]);
    },
  );

  it.skipIf("error" in loadTurboJpeg())(
    "decodes JPEGs with libjpeg-turbo on its threads (JPEG_DECODER=auto), to the bytes sharp's decode gives",
    async () => {
      const turbo = await pair("vision_binary");
      const viaSharp = await pair("vision_binary", "sharp");
      expect(turbo.threads.jpegDecoder).toMatch(/^libjpeg-turbo \(/);
      expect(viaSharp.threads.jpegDecoder).toBe("sharp");
      const jpegs = turbo.fx.images.filter((n) => n.endsWith(".jpg"));
      expect(jpegs.length).toBeGreaterThanOrEqual(4);
      for (const img of jpegs) {
        const bytes = turbo.fx.image(img);
        const [a, b] = await Promise.all([
          turbo.threads.predictImage(new Uint8Array(bytes), opts),
          viaSharp.threads.predictImage(new Uint8Array(bytes), opts),
        ]);
        expect(Buffer.from(a.bytes).toString("utf8")).toBe(Buffer.from(b.bytes).toString("utf8"));
      }
      await Promise.all([turbo.threads.close(), turbo.plain.close(), viaSharp.threads.close(), viaSharp.plain.close()]);
    },
  );

  it("answers correctly after its slots run out (answers in buffers of their own) and after they come back", async () => {
    const { fx, threads, plain, reference } = await pair("vision_binary");
    const bytes = fx.image(fx.images[0]);
    const expected = await reference(bytes);
    const held = [];
    for (let i = 0; i < 12; i++) held.push(await threads.predictImage(new Uint8Array(bytes), opts));
    for (const r of held) expect(Buffer.from(r.bytes).toString("utf8")).toBe(expected); // none overwritten
    held.forEach((r) => r.release!());
    for (let i = 0; i < 4; i++) {
      const r = await threads.predictImage(new Uint8Array(bytes), opts);
      expect(Buffer.from(r.bytes).toString("utf8")).toBe(expected);
      r.release!();
    }
    await Promise.all([threads.close(), plain.close()]);
  });

  it("refuses an undecodable image with the 415 the event loop gave, and a table model says it takes no images", async () => {
    const { threads, plain } = await pair("vision_binary");
    const err = await threads.predictImage(Buffer.from("not an image at all"), opts).catch((e) => e);
    expect(err).toBeInstanceOf(OutboundRefusal);
    expect([err.status, err.code]).toEqual([415, "invalid_image"]);
    const tableDir = servingFixtures().modelDir("tabular_binary");
    const table = await openPredictor(
      path.join(tableDir, "model.onnx"),
      checkManifest(JSON.parse(fs.readFileSync(path.join(tableDir, "manifest.json"), "utf8"))),
      {
        intraOpThreads: 1,
        inline: false,
      },
    );
    await expect(table.predictImage(Buffer.from("x"), opts)).rejects.toThrow(/takes rows, not images/);
    await table.close();
    await Promise.all([threads.close(), plain.close()]);
  });

  it("starts its threads with an 8 MB young generation (the smaller default made them run a full GC every ~15 images)", async () => {
    const { threads, plain } = await pair("vision_binary");
    // A thread started after the model's: V8 sizes an isolate's young generation when it creates it.
    const newSpace = await new Promise<number>((resolve, reject) => {
      const w = new Worker(
        `const v8 = require("node:v8"); require("node:worker_threads").parentPort.postMessage(v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size)`,
        { eval: true },
      );
      w.once("message", (n: number) => void w.terminate().then(() => resolve(n)));
      w.once("error", reject);
    });
    expect(newSpace).toBeGreaterThanOrEqual(8 * 2 ** 20);
    await Promise.all([threads.close(), plain.close()]);
  });
});
