import { describe, expect, it } from "vitest";
import { decodeDicom, DicomError, readDicomHeader } from "../../src/dicom/index.js";
import { preprocessImage, preprocessInline, resizeToSpec } from "../../src/serving/preprocess.js";
import type { ImageSpec } from "../../src/serving/manifest.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";

// Parity with the pipeline (issue 41): for every DICOM make_dicoms.py writes (each transfer syntax, MONOCHROME1/2,
// 8/12/16-bit, signed with rescale, RGB/YBR, multi-frame) and pydicom's JPEG Lossless SV1 file, under the file's own
// window, a preset and an explicit window, serving's rendering (src/dicom) equals builder_pipelines.common.dicom's,
// and the resized uint8 tensor equals vision.preprocess.load_uint8's within the image parity tests' tolerance.
describe.skipIf(!haveDicomPython)("DICOM rendering matches the pipeline's", () => {
  const fx = dicomFixtures();
  const spec = (s: { width: number; height: number; channels: 1 | 3 }): ImageSpec =>
    ({ ...s, resize: "stretch", interpolation: "bilinear", scale: 1 / 255, mean: [0], std: [1] }) as unknown as ImageSpec;

  it("covers every transfer syntax and photometric interpretation the generator writes", () => {
    const ok = fx.files.filter((f) => f.expect === "ok");
    const covered = new Set(fx.reference.map((e) => e.file));
    for (const f of ok) expect(covered.has(f.file), f.file).toBe(true);
    expect(new Set(ok.map((f) => f.transfer_syntax)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(ok.map((f) => f.photometric))).toEqual(new Set(["MONOCHROME1", "MONOCHROME2", "RGB", "YBR_FULL"]));
  });

  it.each(fx.reference.map((e) => [`${e.file} (${e.rendering})`, e] as const))("%s", async (_name, e) => {
    const { image } = await decodeDicom(fx.bytes(e.file), e.record);
    const want = fx.rendered(e);
    expect([image.height, image.width, image.channels]).toEqual([e.shape[0], e.shape[1], e.shape[2] ?? 1]);
    // The rendering is exact: the same formula on the same decoded values. Lossy JPEG colour is within one level:
    // both sides decode it with libjpeg-turbo (the pipeline through pydicom's Pillow plugin), and its YCbCr -> RGB
    // step rounds one level apart from pydicom's on some pixels.
    const lossy = e.file.startsWith("jpeg_baseline");
    expect(maxDiff(image.pixels, want), "rendered").toBeLessThanOrEqual(lossy ? 1 : 0);
    for (const [name, s] of Object.entries(e.specs)) {
      const { pixels } = resizeToSpec(image, spec(s));
      const ref = fx.resized(e, name); // CHW; ours is HWC
      const plane = s.width * s.height;
      let d = 0;
      for (let c = 0; c < s.channels; c++)
        for (let i = 0; i < plane; i++) d = Math.max(d, Math.abs(ref[c * plane + i] - pixels[i * s.channels + c]));
      // The tolerance of serving-preprocess.test.ts: one grey level (Pillow's resize pass order, see resample.ts).
      expect(d, name).toBeLessThanOrEqual(1);
    }
  });

  it("refuses the corrupt and the unsupported file with an error naming the transfer syntax", async () => {
    for (const f of fx.files.filter((x) => x.expect === "error")) {
      const err = await decodeDicom(fx.bytes(f.file), undefined).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, f.file).toBeInstanceOf(DicomError);
      const e = err as DicomError;
      expect(e.message).toContain(f.transfer_syntax);
      expect(e.message).toContain(f.transfer_syntax_name);
      expect(e.status).toBe(415);
    }
  });

  it("builds the same tensor on the preprocessing threads (the batched path) as inline, and keeps a bad file's 415", async () => {
    const s = spec({ width: 24, height: 20, channels: 3 });
    for (const file of ["jpegls_mono2_u12_window.dcm", "j2k_rgb.dcm", "rle_mono2_s16_rescale.dcm"]) {
      const pooled = await preprocessImage(fx.bytes(file), s, 1e8);
      const inline = await preprocessInline(fx.bytes(file), s, 1e8);
      expect(Array.from(pooled.tensor), file).toEqual(Array.from(inline.tensor));
      expect([pooled.origWidth, pooled.origHeight]).toEqual([inline.origWidth, inline.origHeight]);
    }
    const corrupt = fx.files.find((f) => f.expect === "error")!;
    await expect(preprocessImage(fx.bytes(corrupt.file), s, 1e8)).rejects.toMatchObject({ status: 415 });
    await expect(preprocessImage(fx.bytes("evrle_mono2_u8.dcm"), s, 100)).rejects.toMatchObject({
      status: 413,
      code: "image_too_many_pixels",
    });
  });

  it("reads a bare dataset (no preamble, no file meta) when asked, as the pipeline reads a .dcm file", async () => {
    for (const file of ["evrle_mono2_u12_window.dcm", "ivrle_mono2_u12_3frames.dcm"]) {
      const full = fx.bytes(file);
      // The file meta group's length is (0002,0000)'s UL value, right after "DICM" and its 12-byte element.
      const bare = full.subarray(132 + 12 + full.readUInt32LE(140));
      const want = (await decodeDicom(full, undefined)).image;
      const got = (await decodeDicom(bare, undefined, Infinity, { bare: true })).image;
      expect(Array.from(got.pixels), file).toEqual(Array.from(want.pixels));
      await expect(decodeDicom(bare, undefined)).rejects.toMatchObject({ code: "invalid_dicom" });
    }
  });

  it("says which identifying tags a header fills, never their values", () => {
    const phi = fx.files.find((f) => f.phi)!;
    const header = readDicomHeader(fx.bytes(phi.file));
    expect(header.identifyingTags).toEqual(["PatientName", "PatientID", "PatientBirthDate"]);
    const text = JSON.stringify(header);
    for (const value of ["Zzyzx", "Quentavious", "PHI-7731-XQ", "19230817"]) expect(text).not.toContain(value);
    const clean = readDicomHeader(fx.bytes(fx.files.find((f) => !f.phi && f.expect === "ok")!.file));
    expect(clean.identifyingTags).toEqual([]);
  });
});

function maxDiff(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}
