import sharp from "sharp";
import { overlayClass } from "../batches/overlays.js";
import { dataSet, el, newUid, writePart10 } from "../dicom/write.js";
import { rampAlpha, rampColour } from "../serving/gradcam-ramp.js";
import type { ServedManifest } from "../serving/manifest.js";
import { preprocessPool } from "../serving/preprocess-pool.js";
import type { SourceImage } from "./source.js";
import { commonAttributes, SC_SERIES_NUMBER, SECONDARY_CAPTURE, type AnswerFacts, type WrittenObject } from "./structured-report.js";

/**
 * The image as the model saw it (its rendering of the DICOM: the manifest's window), with the Grad-CAM map of the
 * decided class painted over it (the dashboard's ramp) or the detection boxes drawn, and a caption band burned in:
 * model, version, decision and the "not for diagnosis" wording. A Secondary Capture (RGB, 8 bits) in the source's
 * study, a new series: a viewer that shows no SR still shows the answer. Small images are enlarged (nearest
 * neighbour, so no detail is invented) until the caption can be read.
 */

/** The shorter side an SC is enlarged to at least, so its caption is legible (BreastMNIST images are 28 pixels). */
const MIN_SIDE = 512;
const BOX_COLOUR = [255, 64, 64] as const;

export async function secondaryCapture(
  src: SourceImage,
  bytes: Buffer,
  answer: Record<string, unknown>,
  facts: AnswerFacts,
  manifest: ServedManifest,
  o: { maxPixels: number; now?: Date; ids?: { series: string; instance: string } },
): Promise<WrittenObject> {
  // Decoded on a preprocessing thread: a large JPEG 2000 frame takes seconds, which the event loop must not wait for.
  const { image } = await preprocessPool().inspectDicom(bytes, {
    pixels: true,
    maxPixels: o.maxPixels,
    rendering: manifest.input.image?.dicom,
  });
  if (!image) throw new Error("the preprocessing thread sent no image back");
  const k = Math.max(1, Math.ceil(MIN_SIDE / Math.min(image.width, image.height)));
  const w = image.width * k;
  const h = image.height * k;
  const rgb = Buffer.from(
    await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })
      .resize(w, h, { kernel: "nearest" })
      .toColourspace("srgb")
      .removeAlpha()
      .raw()
      .toBuffer(),
  );
  if (rgb.length !== w * h * 3) throw new Error("the rendered image is not RGB");

  const gradients = answer.gradients as Record<string, number[][]> | undefined;
  const cls = overlayClass(answer);
  const map = cls !== undefined ? gradients?.[cls] : undefined;
  if (map?.length) await paintMap(rgb, w, h, map);
  for (const b of facts.boxes ?? [])
    drawBox(
      rgb,
      w,
      h,
      b.box.map((v) => v * k),
    );

  const band = Math.max(36, Math.round(w * 0.07));
  const captioned = await sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .extend({ bottom: band * 2, background: { r: 0, g: 0, b: 0 } })
    .composite([{ input: captionSvg(w, band, facts), top: h, left: 0 }])
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const [width, height] = [captioned.info.width, captioned.info.height];

  const ids = o.ids ?? { series: newUid(), instance: newUid() };
  const ds = dataSet({
    ...commonAttributes(src, {
      sopClass: SECONDARY_CAPTURE,
      sopInstance: ids.instance,
      series: ids.series,
      seriesNumber: SC_SERIES_NUMBER,
      modality: "OT",
      modelName: facts.modelName,
      modelVersion: facts.modelVersion,
      now: o.now ?? new Date(),
    }),
    "00080008": el.str("CS", ["DERIVED", "SECONDARY"]),
    "00080064": el.str("CS", "WSD"), // ConversionType: workstation
    "00082111": el.str(
      "ST",
      `${facts.modelName} version ${facts.modelVersion}: ${map ? "Grad-CAM overlay" : facts.boxes ? "detection boxes" : "image"}, captioned`,
    ),
    "00082112": el.seq(dataSet({ "00081150": el.str("UI", src.sopClassUid), "00081155": el.str("UI", src.sopInstanceUid) })),
    "00200020": el.str("CS", ""), // PatientOrientation (type 2)
    "00204000": el.str("LT", captionLines(facts).join(" | ")),
    "00280002": { vr: "US", value: 3 },
    "00280004": el.str("CS", "RGB"),
    "00280006": { vr: "US", value: 0 },
    "00280010": { vr: "US", value: height },
    "00280011": { vr: "US", value: width },
    "00280100": { vr: "US", value: 8 },
    "00280101": { vr: "US", value: 8 },
    "00280102": { vr: "US", value: 7 },
    "00280103": { vr: "US", value: 0 },
    "00280301": el.str("CS", "YES"), // BurnedInAnnotation: the caption is in the pixels
    "00282110": el.str("CS", "00"),
    "7FE00010": { vr: "OB", value: captioned.data },
  });
  return { sopClass: SECONDARY_CAPTURE, sopInstance: ids.instance, series: ids.series, bytes: writePart10(ds, src.encoding) };
}

/** The map (0..255, columnas x filas) stretched over the image and blended with the dashboard's ramp. */
async function paintMap(rgb: Buffer, w: number, h: number, map: number[][]): Promise<void> {
  const mh = map.length;
  const mw = map[0]?.length ?? 0;
  if (!mw) return;
  const grey = Buffer.alloc(mw * mh);
  map.forEach((row, y) => row.forEach((v, x) => (grey[y * mw + x] = Math.max(0, Math.min(255, v | 0)))));
  const big = await sharp(grey, { raw: { width: mw, height: mh, channels: 1 } })
    .resize(w, h, { fit: "fill" })
    .extractChannel(0) // sharp hands a grey image back as three channels otherwise
    .raw()
    .toBuffer();
  if (big.length !== w * h) throw new Error("the Grad-CAM map did not resize to one channel");
  const lut = Array.from({ length: 256 }, (_, v) => ({ c: rampColour(v / 255), a: Math.round(rampAlpha(v / 255) * 256) }));
  for (let i = 0; i < w * h; i++) {
    const { c, a } = lut[big[i]];
    const keep = 256 - a;
    for (let ch = 0; ch < 3; ch++) rgb[i * 3 + ch] = (rgb[i * 3 + ch] * keep + c[ch] * a + 128) >> 8;
  }
}

function drawBox(rgb: Buffer, w: number, h: number, [x1, y1, x2, y2]: number[]): void {
  const t = Math.max(2, Math.round(Math.min(w, h) / 200));
  const clampX = (v: number) => Math.max(0, Math.min(w - 1, Math.round(v)));
  const clampY = (v: number) => Math.max(0, Math.min(h - 1, Math.round(v)));
  const [l, r, top, bottom] = [clampX(x1), clampX(x2), clampY(y1), clampY(y2)];
  const set = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    rgb.set(BOX_COLOUR, (y * w + x) * 3);
  };
  for (let d = 0; d < t; d++) {
    for (let x = l; x <= r; x++) {
      set(x, top + d);
      set(x, bottom - d);
    }
    for (let y = top; y <= bottom; y++) {
      set(l + d, y);
      set(r - d, y);
    }
  }
}

export function captionLines(f: AnswerFacts): [string, string] {
  const decision = f.boxes
    ? `${f.boxes.length} detection${f.boxes.length === 1 ? "" : "s"}`
    : `decision: ${f.decided?.length ? f.decided.join(", ") : "none of the classes"}`;
  return [`Builder - ${f.modelName} - model version ${f.modelVersion} - ${decision}`, f.caption];
}

const xml = (s: string) => s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);

function captionSvg(w: number, band: number, f: AnswerFacts): Buffer {
  const lines = captionLines(f);
  // DejaVu Sans averages ~0.55 em a character: the type shrinks until the longer line fits the width.
  const longest = Math.max(...lines.map((l) => l.length));
  const size = Math.max(8, Math.min(Math.round(band * 0.5), Math.floor((w * 0.95) / (longest * 0.55))));
  const line = (text: string, y: number, colour: string) =>
    `<text x="${Math.round(w * 0.02)}" y="${y}" font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="${colour}">${xml(text)}</text>`;
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${band * 2}">${line(lines[0], Math.round(band * 0.7), "#ffffff")}${line(lines[1], Math.round(band * 1.7), "#ffd000")}</svg>`,
  );
}
