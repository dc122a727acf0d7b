import { describe, expect, it } from "vitest";
import { codecMemoryBytes, decodeDicom, DicomError } from "../../src/dicom/index.js";
import { localizeError } from "../../src/http/error-language.js";
import { deflateBomb, j2kDicom, withStatedSize } from "../helpers/dicom-bombs.js";
import { dicomFixtures, haveDicomPython } from "../helpers/dicom-fixtures.js";
import { SYNTAX, writeDicom } from "../helpers/dicom-writer.js";

// Security issue 48, findings 1 and 2: a DICOM may not make a decoder allocate more than the pixel limit allows.
// A compressed frame's own header (JPEG SOF, JPEG 2000 SIZ) must state the size the DICOM header states, which is
// held to the limit, before any decoder runs; a deflated data set inflates no further than such an image needs; a
// codec whose WebAssembly memory grew on a large frame is dropped so that memory can be freed.
const MiB = 2 ** 20;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("the file was decoded; it should have been refused");
    },
    (e: unknown) => e as DicomError,
  );

describe("DICOM decoding within the pixel limit", () => {
  it("refuses a JPEG 2000 frame that states 16384x16384 pixels inside a 64x64 header, before OpenJPEG allocates", async () => {
    const file = j2kDicom(16384, 64);
    expect(file.length).toBeLessThan(1100);
    const e = await refusal(decodeDicom(file, undefined, 50_000_000));
    expect(e).toBeInstanceOf(DicomError);
    expect([e.status, e.code]).toEqual([415, "dicom_decode_failed"]);
    expect(e.message).toContain("the compressed frame states 16384x16384 pixels with 1 sample(s) each; the header says 64x64 with 1");
    // Decoding it grew OpenJPEG's memory to over 1 GB (and took 8-20 s); refused first, it stays at its start.
    expect(codecMemoryBytes("jpeg-2000")).toBeGreaterThan(0);
    expect(codecMemoryBytes("jpeg-2000")).toBeLessThanOrEqual(64 * MiB);
    expect(localizeError(e, "es").message).toMatch(/^los píxeles no se pueden decodificar: el fotograma comprimido declara 16384x16384/);
  });

  it("refuses the same file with a header over the limit as too many pixels (413)", async () => {
    const e = await refusal(decodeDicom(j2kDicom(16384, 16384), undefined, 50_000_000));
    expect([e.status, e.code]).toEqual([413, "image_too_many_pixels"]);
    expect(codecMemoryBytes("jpeg-2000")).toBeLessThanOrEqual(64 * MiB);
  });

  it("drops a codec whose memory grew on a large frame, and loads it again for the next one", async () => {
    const big = await decodeDicom(j2kDicom(4096, 4096), undefined, 50_000_000);
    expect([big.image.width, big.image.height]).toEqual([4096, 4096]);
    expect(codecMemoryBytes("jpeg-2000")).toBe(0); // grown past 64 MiB: dropped, so V8 can free it
    const small = await decodeDicom(
      writeDicom({ syntax: SYNTAX.explicitLittle, rows: 2, columns: 2, pixels: new Uint8Array(4) }),
      undefined,
    );
    expect(small.image.width).toBe(2);
    // The next decode instantiated the codecs again, at their first size.
    expect(codecMemoryBytes("jpeg-2000")).toBeGreaterThan(0);
    expect(codecMemoryBytes("jpeg-2000")).toBeLessThanOrEqual(64 * MiB);
  });

  it("inflates a deflated data set no further than an image within the limit needs (413)", async () => {
    const bomb = deflateBomb(200_000); // ~200 KB that inflate to ~200 MB
    const small = await refusal(decodeDicom(bomb, undefined, 1_000_000));
    expect([small.status, small.code]).toEqual([413, "image_too_many_pixels"]);
    expect(small.message).toMatch(
      /^the deflated DICOM data set inflates to more than 5048576 bytes, more than an image of at most 1000000 pixels needs \(transfer syntax Deflated Explicit VR Little Endian/,
    );
    expect(localizeError(small, "es").message).toMatch(
      /^el conjunto de datos DICOM comprimido con deflate se descomprime en más de 5048576 bytes/,
    );
    // With a large limit, 64 times the file still bounds it.
    const large = await refusal(decodeDicom(bomb, undefined, 50_000_000));
    expect(large.message).toContain(`inflates to more than ${bomb.length * 64} bytes, over 64 times the size of the file`);
    // A deflated file within both bounds is read.
    const pixels = Uint8Array.from({ length: 64 * 64 }, (_, i) => i % 251);
    const ok = await decodeDicom(writeDicom({ syntax: SYNTAX.deflated, rows: 64, columns: 64, pixels }), undefined, 64 * 64);
    expect(Array.from(ok.image.pixels)).toEqual(Array.from(pixels));
  });
});

describe.skipIf(!haveDicomPython)("a codestream that disagrees with its DICOM header, in every compressed syntax", () => {
  const dx = dicomFixtures();
  const files = ["jpeg_baseline_mono2_u8.dcm", "jpeg_baseline_rgb.dcm", "jpegls_mono2_u12_window.dcm", "j2k_rgb.dcm", "sv1_rgb.dcm"];

  it.each(files)("%s stating 16384x16384 is refused before its decoder runs", async (name) => {
    const file = dx.files.find((f) => f.file === name);
    const e = await refusal(decodeDicom(withStatedSize(dx.bytes(name), 16384, 16384), undefined, 50_000_000));
    expect([e.status, e.code]).toEqual([415, "dicom_decode_failed"]);
    expect(e.message).toContain("the compressed frame states 16384x16384 pixels");
    if (file) expect(e.message).toContain(file.transfer_syntax);
    for (const kind of ["jpeg-baseline", "jpeg-ls", "jpeg-2000"] as const)
      expect(codecMemoryBytes(kind), kind).toBeLessThanOrEqual(64 * MiB);
    // The file as written decodes.
    expect((await decodeDicom(dx.bytes(name), undefined, 50_000_000)).image.width).toBeGreaterThan(0);
  });
});
