import sharp, { type Sharp } from "sharp";
import { describe, expect, it } from "vitest";
import { storedGreyFromHeader } from "../../src/serving/stored-channels.js";

// The grey-file check reads PNG and JPEG headers in JS instead of asking sharp's metadata() for every decoded image
// (issue 49 item 8): it must say what metadata() says (channels less alpha equal 1), or leave the case to it.

const W = 16;
const H = 10;
const pixels = (channels: number) => Buffer.from(Array.from({ length: W * H * channels }, (_, i) => (i * 37) % 256));
const raw = (channels: 1 | 2 | 3 | 4) => sharp(pixels(channels), { raw: { width: W, height: H, channels } });
const greyish = (img: Sharp, channels: number) => (channels < 3 ? img.toColourspace("b-w") : img);

const byMetadata = async (bytes: Buffer) => {
  const meta = await sharp(bytes).metadata();
  return (meta.channels ?? 3) - (meta.hasAlpha ? 1 : 0) === 1;
};

describe("storedGreyFromHeader", () => {
  const cases: Array<[string, () => Promise<Buffer>]> = [
    ["grey PNG", () => greyish(raw(1), 1).png().toBuffer()],
    ["grey + alpha PNG", () => greyish(raw(2), 2).png().toBuffer()],
    ["16-bit grey PNG", () => greyish(raw(1), 1).png().toColourspace("grey16").toBuffer()],
    ["RGB PNG", () => raw(3).png().toBuffer()],
    ["RGBA PNG", () => raw(4).png().toBuffer()],
    ["grey JPEG", () => greyish(raw(1), 1).jpeg().toBuffer()],
    ["colour JPEG", () => raw(3).jpeg().toBuffer()],
    ["progressive colour JPEG", () => raw(3).jpeg({ progressive: true }).toBuffer()],
    ["CMYK JPEG", () => raw(3).jpeg().toColourspace("cmyk").toBuffer()],
  ];
  for (const [name, make] of cases)
    it(`says what sharp's metadata() says for a ${name}`, async () => {
      const bytes = await make();
      const fromHeader = storedGreyFromHeader(bytes);
      expect(fromHeader).toBeDefined();
      expect(fromHeader).toBe(await byMetadata(bytes));
    });

  it("knows the grey ones from the colour ones", async () => {
    expect(storedGreyFromHeader(await greyish(raw(1), 1).png().toBuffer())).toBe(true);
    expect(storedGreyFromHeader(await greyish(raw(1), 1).jpeg().toBuffer())).toBe(true);
    expect(storedGreyFromHeader(await raw(3).png().toBuffer())).toBe(false);
    expect(storedGreyFromHeader(await raw(3).jpeg().toBuffer())).toBe(false);
  });

  it("leaves to sharp what it does not read: a palette PNG, other formats, truncated or broken bytes", async () => {
    expect(storedGreyFromHeader(await raw(3).png({ palette: true }).toBuffer())).toBeUndefined();
    expect(storedGreyFromHeader(await raw(3).webp().toBuffer())).toBeUndefined();
    expect(storedGreyFromHeader(await raw(1).tiff().toBuffer())).toBeUndefined();
    const jpeg = await raw(3).jpeg().toBuffer();
    expect(storedGreyFromHeader(jpeg.subarray(0, 6))).toBeUndefined();
    expect(storedGreyFromHeader(Uint8Array.from([0xff, 0xd8, 0x00, 0x00, 0x00]))).toBeUndefined();
    expect(storedGreyFromHeader(new Uint8Array(0))).toBeUndefined();
  });
});
