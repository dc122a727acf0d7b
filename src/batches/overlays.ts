import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import yazl from "yazl";
import { rampAlpha, rampColour } from "../serving/gradcam-ramp.js";

// Grad-CAM overlays of an image batch (POST .../batch?overlays=true): for each image, the image itself with the map
// of its predicted class painted over it, as a PNG, in overlays.zip beside results.csv. The map is /predict's own
// `gradients` entry (the same call scores the image), so the picture shows exactly what the Try-it page shows for
// that image: the same colour ramp (src/serving/gradcam-ramp.ts) at the page's default opacity. The PNG has the
// map's size: the image's own, scaled down so its longer side is at most GRADCAM_MAX_SIDE.

/** The Try-it page's default opacity of the map over the image. */
const OPACITY = 0.6;

/** Colour and opacity (0..256, OPACITY included) for each map value 0..255, once: the blend is integer arithmetic. */
const LUT = (() => {
  const rgb = new Uint8Array(256 * 3);
  const alpha = new Uint16Array(256);
  for (let v = 0; v < 256; v++) {
    const [r, g, b] = rampColour(v / 255);
    rgb.set([r, g, b], v * 3);
    alpha[v] = Math.round(256 * OPACITY * rampAlpha(v / 255));
  }
  return { rgb, alpha };
})();

/**
 * The class whose map an overlay shows: the predicted class (binary and multiclass predict one); for a multi-label
 * model the predicted class with the highest score. Undefined when no class has a map (a multi-label image with no
 * class predicted).
 */
export function overlayClass(answer: { score?: number[]; gradients?: Record<string, unknown> }): string | undefined {
  const keys = Object.keys(answer.gradients ?? {});
  const score = answer.score ?? [];
  return keys.sort((a, b) => (score[Number(b)] ?? 0) - (score[Number(a)] ?? 0))[0];
}

/**
 * The image with the map blended over it, as PNG bytes, `columnas` x `filas` pixels (the map's size). Without a map
 * (none predicted), the image alone at that size. Decoding goes through sharp with the pixel limit /predict applies.
 */
export async function overlayPng(
  image: Uint8Array,
  size: { columnas: number; filas: number },
  map: number[][] | undefined,
  maxPixels: number,
): Promise<Buffer> {
  const { columnas: w, filas: h } = size;
  const { data, info } = await sharp(image, { limitInputPixels: maxPixels, pages: 1 })
    .resize(w, h, { fit: "fill" })
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer({ resolveWithObject: true });
  const c = info.channels;
  const out = Buffer.allocUnsafe(w * h * 3);
  const { rgb, alpha } = LUT;
  for (let y = 0; y < h; y++) {
    const row = map?.[y];
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const src = i * c;
      const o = i * 3;
      const v = row ? Math.max(0, Math.min(255, row[x] | 0)) : 0;
      const a = alpha[v];
      const keep = 256 - a;
      for (let k = 0; k < 3; k++) {
        const p = data[c >= 3 ? src + k : src];
        out[o + k] = (p * keep + rgb[v * 3 + k] * a + 128) >> 8;
      }
    }
  }
  return sharp(out, { raw: { width: w, height: h, channels: 3 } })
    .png({ compressionLevel: 3 }) // as small as level 6 on photographs, in two thirds of the time
    .toBuffer();
}

/**
 * Overlay file names: the input's own name with .png for its extension ("scans/p01.jpg" -> "scans/p01.png"), so each
 * picture sits where its image sat in the zip the team sent. Two inputs that would meet on one name ("p01.jpg" and
 * "p01.png") keep their extension in it ("p01.jpg.png").
 */
export class OverlayNames {
  private readonly taken = new Set<string>();

  name(input: string): string {
    const ext = path.extname(input);
    let out = `${input.slice(0, input.length - ext.length)}.png`;
    if (this.taken.has(out.toLowerCase())) out = `${input}.png`;
    for (let k = 2; this.taken.has(out.toLowerCase()); k++) out = `${input} (${k}).png`;
    this.taken.add(out.toLowerCase());
    return out;
  }
}

/**
 * The overlays as they are made, one PNG file at a time on disk, then zipped in input order into `zipFile`. yazl reads
 * each file only when it writes that entry, and the PNGs are stored (they are compressed already), so memory holds one
 * image at a time however many the batch has.
 */
export class OverlayWriter {
  private readonly entries: Array<{ file: string; name: string }> = [];
  private readonly names = new OverlayNames();

  constructor(private readonly dir: string) {}

  async add(input: string, png: Buffer): Promise<string> {
    if (this.entries.length === 0) await fs.promises.mkdir(this.dir, { recursive: true });
    const name = this.names.name(input);
    const file = path.join(this.dir, `${String(this.entries.length).padStart(7, "0")}.png`);
    await fs.promises.writeFile(file, png);
    this.entries.push({ file, name });
    return name;
  }

  get count(): number {
    return this.entries.length;
  }

  async zip(zipFile: string): Promise<void> {
    const zip = new yazl.ZipFile();
    const written = new Promise<void>((resolve, reject) => {
      const out = fs.createWriteStream(zipFile);
      out.on("error", reject);
      out.on("close", () => resolve());
      zip.outputStream.on("error", reject).pipe(out);
    });
    for (const { file, name } of this.entries) zip.addFile(file, name, { compress: false });
    zip.end();
    await written;
  }
}
