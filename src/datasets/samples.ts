import fs from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { preprocessPool } from "../serving/preprocess-pool.js";
import type { ImageInfo } from "./images.js";
import type { CheckedTable } from "./table-checks.js";

// A few thumbnails per class for the dataset report that POST /v1/datasets/validate returns, so a person can see
// at a glance that "pneumonia" images look like pneumonia and not like the other class (a swapped label, a folder
// of blank scans). Small inline JPEGs: the validate answer is read once and never stored, and no extra route has
// to reach into the zip later.

export const SAMPLES_PER_CLASS = 3;
const MAX_CLASSES = 20;
const THUMB_SIDE = 96;

export interface Sample {
  path: string;
  row: number;
  /** data:image/jpeg;base64,... at most THUMB_SIDE px on its longer side. */
  data: string;
}

/** Per class of the first label column: the first SAMPLES_PER_CLASS decodable images, in CSV order. */
export async function sampleThumbnails(
  root: string,
  checked: CheckedTable,
  sizes: Map<string, ImageInfo>,
): Promise<Record<string, Sample[]>> {
  const labelIdx = checked.labelIdx[0];
  const picked = new Map<string, Array<{ path: string; row: number }>>();
  for (const r of checked.rows) {
    if (!r.image || "error" in (sizes.get(r.image) ?? { error: "" })) continue;
    const cls = r.values[labelIdx];
    const list = picked.get(cls) ?? (picked.size < MAX_CLASSES ? picked.set(cls, []).get(cls)! : undefined);
    if (list && list.length < SAMPLES_PER_CLASS && !list.some((s) => s.path === r.image)) list.push({ path: r.image, row: r.row });
  }
  const out: Record<string, Sample[]> = {};
  for (const [cls, list] of [...picked].sort(([a], [b]) => a.localeCompare(b))) {
    out[cls] = [];
    for (const s of list) {
      const file = path.join(root, ...s.path.split("/"));
      const jpeg =
        "dicom" in (sizes.get(s.path) ?? {})
          ? await dicomThumbnail(file)
          : await sharp(file, { limitInputPixels: 200_000_000 })
              .rotate()
              .resize(THUMB_SIDE, THUMB_SIDE, { fit: "inside", withoutEnlargement: true })
              .flatten({ background: "#ffffff" })
              .jpeg({ quality: 70 })
              .toBuffer()
              .catch(() => null);
      if (jpeg) out[cls].push({ ...s, data: `data:image/jpeg;base64,${jpeg.toString("base64")}` });
    }
  }
  return out;
}

/** A DICOM rendered as training renders it by default (its own window) and shrunk like the other thumbnails. */
async function dicomThumbnail(file: string): Promise<Buffer | null> {
  try {
    // Only files that passed inspectImages (under the pixel limit) get here.
    const { image } = await preprocessPool().inspectDicom(await fs.readFile(file), { pixels: true, bare: true, maxPixels: Infinity });
    return await sharp(image!.pixels, { raw: { width: image!.width, height: image!.height, channels: image!.channels } })
      .resize(THUMB_SIDE, THUMB_SIDE, { fit: "inside", withoutEnlargement: true })
      .jpeg({ quality: 70 })
      .toBuffer();
  } catch {
    return null;
  }
}
