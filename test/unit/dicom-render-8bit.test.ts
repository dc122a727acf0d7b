import { describe, expect, it } from "vitest";
import type { DicomRendering } from "../../src/contract/types.js";
import { decodeDicom, DEFAULT_RENDERING } from "../../src/dicom/index.js";
import { SYNTAX, writeDicom } from "../helpers/dicom-writer.js";

// Security issue 48, finding 18: an 8-bit grey DICOM without a window was stretched from its minimum to its maximum,
// so the same pixels sent as a PNG and as a DICOM got different scores. Unsigned grey of at most 8 bits stored now
// keeps its values (what the PNG holds) unless a window says otherwise; deeper images are still stretched, and a
// model whose manifest predates the rule (no unwindowed_8bit) is still served the stretch it was trained on.
const W = 8;
const H = 6;
const narrow = Uint8Array.from({ length: W * H }, (_, i) => 40 + Math.round((i / (W * H - 1)) * 160)); // 40..200
const file = (extra: Partial<Parameters<typeof writeDicom>[0]> = {}) =>
  writeDicom({ syntax: SYNTAX.explicitLittle, rows: H, columns: W, pixels: narrow, ...extra });
const pixelsOf = async (bytes: Uint8Array, rendering?: DicomRendering) => Array.from((await decodeDicom(bytes, rendering)).image.pixels);

describe("an unwindowed 8-bit grey DICOM", () => {
  it("keeps its stored values as grey levels, as a PNG of the same pixels does", async () => {
    expect(await pixelsOf(file())).toEqual(Array.from(narrow));
    expect(await pixelsOf(file(), DEFAULT_RENDERING)).toEqual(Array.from(narrow));
  });

  it("is stretched min..max for a model trained before the rule (its record has no unwindowed_8bit)", async () => {
    const { unwindowed_8bit: _rule, ...older } = DEFAULT_RENDERING;
    const stretched = Array.from(narrow, (v) => Math.floor(((v - 40) / 160) * 255 + 0.5));
    expect(await pixelsOf(file(), older)).toEqual(stretched);
    expect(await pixelsOf(file(), { ...DEFAULT_RENDERING, unwindowed_8bit: "min_max" })).toEqual(stretched);
  });

  it("takes its own window when it has one, and a 16-bit image without one is still stretched", async () => {
    const windowed = await pixelsOf(file({ window: { center: 120.5, width: 81 } }));
    expect(windowed[0]).toBe(0); // 40 is below the window
    expect(windowed.at(-1)).toBe(255); // 200 is above it
    const deep = new Uint16Array(Array.from(narrow, (v) => v * 16));
    const sixteen = await pixelsOf(
      writeDicom({ syntax: SYNTAX.explicitLittle, rows: H, columns: W, bitsAllocated: 16, pixels: new Uint8Array(deep.buffer) }),
    );
    expect([Math.min(...sixteen), Math.max(...sixteen)]).toEqual([0, 255]);
  });
});
