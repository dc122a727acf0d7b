import sharp, { type Sharp } from "sharp";
import { describe, expect, it } from "vitest";
import { decodeJpegTurbo, isJpeg, loadTurboJpeg, PixelMemory } from "../../src/serving/jpeg-turbo.js";
import { decodeImage } from "../../src/serving/preprocess.js";

// libjpeg-turbo on the inference threads must give the pixels sharp gives (and Pillow, which the pipelines train
// with: serving-preprocess.test.ts and serving-image-worker.test.ts cover that on the fixture JPEGs), and must
// decline everything it does not decode itself, so that sharp's answers (CMYK conversion, 413, 415) stay.
const loaded = loadTurboJpeg();
const haveTurbo = !("error" in loaded);

/** A noisy photo-like test card: smooth gradients, edges and noise, so a different DCT or upsampler shows. */
function card(width: number, height: number, channels: 1 | 3): Sharp {
  const px = Buffer.alloc(width * height * channels);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) - 128;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < channels; c++) {
        const v = (((x * (3 + c)) ^ (y * 5)) % 256) + (x > width / 2 ? 60 : 0) + noise() / 4;
        px[(y * width + x) * channels + c] = Math.max(0, Math.min(255, Math.round(v)));
      }
  return sharp(px, { raw: { width, height, channels } });
}

describe.skipIf(!haveTurbo)(
  `libjpeg-turbo decoding (${haveTurbo ? (loaded as { library: string }).library : "skipped: no libturbojpeg on this host, apt-get install libturbojpeg0"})`,
  () => {
    const cases: Array<[string, () => Promise<Buffer>]> = [
      ["4:2:0 baseline, odd size", () => card(333, 211, 3).jpeg({ quality: 85 }).toBuffer()],
      ["4:4:4", () => card(128, 96, 3).jpeg({ quality: 95, chromaSubsampling: "4:4:4" }).toBuffer()],
      ["progressive", () => card(200, 150, 3).jpeg({ quality: 70, progressive: true }).toBuffer()],
      ["mozjpeg (trellis, optimised scans)", () => card(160, 120, 3).jpeg({ mozjpeg: true }).toBuffer()],
      // The profile is not applied, by either decoder here nor by Pillow in the pipelines (checked by hand: equal).
      ["with an ICC profile", () => card(64, 48, 3).withIccProfile("p3").jpeg().toBuffer()],
      ["with EXIF orientation 6 (not applied by either)", () => card(64, 48, 3).withMetadata({ orientation: 6 }).jpeg().toBuffer()],
    ];

    it.each(cases)("%s: the same pixels, size and channels as sharp", async (_name, make) => {
      const bytes = await make();
      const ours = decodeJpegTurbo(bytes, 1e8);
      const ref = await decodeImage(bytes, 1e8);
      expect(ours).toBeDefined();
      expect([ours!.width, ours!.height, ours!.channels]).toEqual([ref.width, ref.height, ref.channels]);
      expect(Buffer.compare(Buffer.from(ours!.pixels), Buffer.from(ref.pixels))).toBe(0);
    });

    it("greyscale: one channel, where sharp repeats the same grey in three (the same image for every model)", async () => {
      const bytes = await card(97, 61, 1).toColourspace("b-w").jpeg({ quality: 90 }).toBuffer();
      const ours = decodeJpegTurbo(bytes, 1e8)!;
      const ref = await decodeImage(bytes, 1e8);
      expect(ours.channels).toBe(1);
      const repeated = new Uint8Array(ours.pixels.length * 3);
      ours.pixels.forEach((v, i) => repeated.fill(v, i * 3, i * 3 + 3));
      expect(
        ref.channels === 1
          ? Buffer.compare(Buffer.from(ours.pixels), Buffer.from(ref.pixels))
          : Buffer.compare(Buffer.from(repeated), Buffer.from(ref.pixels)),
      ).toBe(0);
    });

    it("decodes into reused memory, and the next decode of the same size lands in the same place", async () => {
      const memory = new PixelMemory();
      const a = await card(120, 80, 3).jpeg().toBuffer();
      const first = decodeJpegTurbo(a, 1e8, memory)!;
      const copy = Buffer.from(first.pixels);
      const second = decodeJpegTurbo(a, 1e8, memory)!;
      expect(second.pixels.buffer).toBe(first.pixels.buffer);
      expect(Buffer.compare(Buffer.from(second.pixels), copy)).toBe(0);
      // Above the reuse bound an image gets memory of its own.
      const small = new PixelMemory(1000);
      expect(decodeJpegTurbo(a, 1e8, small)!.pixels.buffer).not.toBe(decodeJpegTurbo(a, 1e8, small)!.pixels.buffer);
    });

    it("declines what sharp must answer: CMYK, over the pixel limit, truncated, corrupt, not a JPEG", async () => {
      const jpeg = await card(100, 80, 3).jpeg().toBuffer();
      const cmyk = await card(40, 30, 3).toColourspace("cmyk").jpeg().toBuffer();
      expect(isJpeg(cmyk)).toBe(true);
      expect(decodeJpegTurbo(cmyk, 1e8)).toBeUndefined();
      expect((await decodeImage(cmyk, 1e8)).channels).toBe(3); // sharp converts it to sRGB

      expect(decodeJpegTurbo(jpeg, 100 * 80 - 1)).toBeUndefined();
      await expect(decodeImage(jpeg, 100 * 80 - 1)).rejects.toMatchObject({ status: 413, code: "image_too_many_pixels" });

      // Cut mid-scan: libjpeg would pad the rest with grey and warn; both decoders refuse it instead.
      const truncated = jpeg.subarray(0, Math.floor(jpeg.length * 0.6));
      expect(decodeJpegTurbo(truncated, 1e8)).toBeUndefined();
      await expect(decodeImage(truncated, 1e8)).rejects.toMatchObject({ status: 415, code: "invalid_image" });

      const corrupt = Buffer.from(jpeg);
      corrupt.fill(0x5a, 200, 260);
      const c = decodeJpegTurbo(corrupt, 1e8);
      if (c) {
        // Scrambled entropy-coded data can still decode cleanly; then it must be what sharp makes of it.
        const ref = await decodeImage(corrupt, 1e8);
        expect(Buffer.compare(Buffer.from(c.pixels), Buffer.from(ref.pixels))).toBe(0);
      }
      expect(decodeJpegTurbo(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 1, 2]), 1e8)).toBeUndefined();
      expect(decodeJpegTurbo(await card(20, 20, 3).png().toBuffer(), 1e8)).toBeUndefined();
      expect(decodeJpegTurbo(Buffer.from("not an image"), 1e8)).toBeUndefined();
    });
  },
);

describe("without libturbojpeg", () => {
  it("says why the library could not be loaded, so serving logs it and decodes with sharp", () => {
    const r = loadTurboJpeg(["/nonexistent/libturbojpeg.so.0"]);
    expect(r).toHaveProperty("error");
    expect((r as { error: string }).error).toMatch(/^\/nonexistent\/libturbojpeg\.so\.0: /);
  });
});
