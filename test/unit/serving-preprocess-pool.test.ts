import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { loadTurboJpeg } from "../../src/serving/jpeg-turbo.js";
import { decodeImage, preprocessImage } from "../../src/serving/preprocess.js";
import { normalise, resizeToSpec } from "../../src/serving/tensor.js";

// Large images are resized on a worker thread; the tensor must be the one the inline path computes.
describe("preprocessing of large images on a worker thread", () => {
  it("gives the same tensor as the inline path and keeps the event loop responsive", async () => {
    const bytes = await sharp({
      create: { width: 1600, height: 1000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 120, sigma: 40 } },
    })
      .png()
      .toBuffer();
    const spec = {
      width: 96,
      height: 80,
      channels: 3 as const,
      resize: "letterbox" as const,
      interpolation: "bilinear" as const,
      pad_value: 114,
      scale: 1 / 255,
      mean: [0.5, 0.5, 0.5],
      std: [0.25, 0.25, 0.25],
    };
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const pre = await preprocessImage(bytes, spec, 1e8);
    clearInterval(timer);
    const img = await decodeImage(bytes, 1e8);
    const inline = normalise(resizeToSpec(img, spec).pixels, spec);
    expect(pre.tensor.length).toBe(inline.length);
    expect(Buffer.from(pre.tensor.buffer).equals(Buffer.from(inline.buffer))).toBe(true);
    expect([pre.origWidth, pre.origHeight, pre.scaleX]).toEqual([1600, 1000, 0.06]);
    expect(ticks).toBeGreaterThan(0);
  });

  // The batched path (CUDA hosts, SERVING_MAX_BATCH): JPEGs are decoded on the thread by libjpeg-turbo.
  it.skipIf("error" in loadTurboJpeg())(
    "decodes a JPEG on the thread with libjpeg-turbo to the tensor sharp's decode gives; declines CMYK to sharp",
    async () => {
      const spec = {
        width: 64,
        height: 48,
        channels: 3 as const,
        resize: "stretch" as const,
        interpolation: "bilinear" as const,
        scale: 1 / 255,
        mean: [0.5, 0.5, 0.5],
        std: [0.25, 0.25, 0.25],
      };
      const photo = sharp({
        create: { width: 333, height: 211, channels: 3, background: "#406080", noise: { type: "gaussian", mean: 120, sigma: 50 } },
      });
      for (const bytes of [
        await photo.clone().jpeg({ quality: 85 }).toBuffer(),
        await photo.clone().toColourspace("cmyk").jpeg().toBuffer(),
      ]) {
        const [turbo, viaSharp] = await Promise.all([preprocessImage(bytes, spec, 1e8), preprocessImage(bytes, spec, 1e8, "sharp")]);
        expect([turbo.origWidth, turbo.origHeight, turbo.scaleX, turbo.scaleY]).toEqual([
          viaSharp.origWidth,
          viaSharp.origHeight,
          viaSharp.scaleX,
          viaSharp.scaleY,
        ]);
        expect(Buffer.from(turbo.tensor.buffer).equals(Buffer.from(viaSharp.tensor.buffer))).toBe(true);
      }
      // Over the pixel cap: declined on the thread, so the refusal is sharp's 413.
      await expect(preprocessImage(await photo.clone().jpeg().toBuffer(), spec, 1000)).rejects.toMatchObject({ status: 413 });
    },
  );
});
