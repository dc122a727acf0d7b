import sharp from "sharp";
import { describe, expect, it } from "vitest";
import type { ImageSpec } from "../../src/serving/manifest.js";
import { describeImage } from "../../src/serving/image-descriptors.js";
import { decodeForModel, toInputTensor } from "../../src/serving/preprocess.js";
import { SYNTAX, writeDicom } from "../helpers/dicom-writer.js";

// img:channels is the channels the file stores, on both sides: the pipelines' baseline counts a grey PNG as "1"
// (Pillow opens it as L; pipelines/tests/test_image_descriptors.py) and serving must too. sharp's raw output is sRGB
// by default, so a grey PNG used to come back with 3 channels and a BreastMNIST model drifted on its own images.

const W = 12;
const H = 8;
const grey = Uint8Array.from({ length: W * H }, (_, i) => (i * 7) % 256);
/** A PNG storing `channels` (sharp writes sRGB unless told the raw pixels are grey). */
const png = (pixels: Uint8Array, channels: 1 | 2 | 3) => {
  const img = sharp(Buffer.from(pixels), { raw: { width: W, height: H, channels } });
  return (channels < 3 ? img.toColourspace("b-w") : img).png().toBuffer();
};
const spec = (channels: 1 | 3): ImageSpec =>
  ({
    width: 6,
    height: 4,
    channels,
    resize: "stretch",
    interpolation: "bilinear",
    scale: 1 / 255,
    mean: Array(channels).fill(0.5),
    std: Array(channels).fill(0.25),
  }) as ImageSpec;
const decode = async (bytes: Uint8Array, channels: 1 | 3 = 1) =>
  (await decodeForModel(bytes, spec(channels), { maxPixels: 1e6, turbo: false }))();
const rgbOf = (g: Uint8Array) => Uint8Array.from({ length: g.length * 3 }, (_, i) => g[Math.floor(i / 3)]);

describe("img:channels at /predict: the channels the file stores", () => {
  it("a grey PNG is one channel, an RGB PNG three, a grey PNG with alpha one", async () => {
    const g = await png(grey, 1);
    expect((await sharp(g).metadata()).channels).toBe(1);
    expect(describeImage(await decode(g)).channels).toBe(1);
    expect(describeImage(await decode(await png(rgbOf(grey), 3))).channels).toBe(3);
    const la = Uint8Array.from({ length: W * H * 2 }, (_, i) => (i % 2 ? 200 : grey[i >> 1]));
    expect((await sharp(await png(la, 2)).metadata()).channels).toBe(2);
    expect(describeImage(await decode(await png(la, 2))).channels).toBe(1);
  });

  it("a 16-bit grey PNG is one channel", async () => {
    const g16 = await sharp(await png(grey, 1))
      .toColourspace("grey16")
      .png()
      .toBuffer();
    expect((await sharp(g16).metadata()).space).toBe("grey16");
    const d = await decode(g16);
    expect(describeImage(d).channels).toBe(1);
    // Its high byte, as the pipelines cast it (vision/preprocess.py _to_mode: x >> 8), not sharp's b-w rounding.
    expect(Array.from(d.pixels)).toEqual(Array.from(grey));
  });

  it("a grey DICOM is one channel", async () => {
    const dcm = writeDicom({ syntax: SYNTAX.explicitLittle, rows: H, columns: W, pixels: grey });
    expect(describeImage(await decode(dcm)).channels).toBe(1);
  });

  it("the grey PNG's intensity and tensor are those of the same grey stored as RGB (the model sees no change)", async () => {
    const asGrey = await decode(await png(grey, 1));
    const asRgb = await decode(await png(rgbOf(grey), 3));
    expect(Array.from(asGrey.pixels)).toEqual(Array.from(grey));
    expect(describeImage(asGrey).mean).toBeCloseTo(describeImage(asRgb).mean, 9);
    expect(describeImage(asGrey).std).toBeCloseTo(describeImage(asRgb).std, 9);
    for (const c of [1, 3] as const)
      expect(Array.from(toInputTensor(asGrey, spec(c)).tensor)).toEqual(Array.from(toInputTensor(asRgb, spec(c)).tensor));
  });
});
