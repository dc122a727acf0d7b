import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readNpz } from "./npz.js";
import { dataSet, el, newUid, writePart10 } from "../../src/dicom/write.js";

/**
 * BreastMNIST images (../shared/datasets/breastmnist, ultrasound, 28x28 grey) as the DICOM a PACS would hold: one
 * Secondary Capture per image, MONOCHROME2 8-bit, in a study of its own, with a (fake) patient's name and id.
 * Without the shared data set, a synthetic 28x28 image stands in, so the PACS tests still run.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// The shared data sets sit beside the checkout (../shared), or beside its parent for a worktree in a subfolder.
const NPZ = [process.env.BUILDER_SHARED_DATASETS, path.join(ROOT, "../shared/datasets"), path.join(ROOT, "../../shared/datasets")]
  .filter((d): d is string => Boolean(d))
  .map((d) => path.join(d, "breastmnist/breastmnist_trainval.npz"))
  .find((f) => fs.existsSync(f))!;
export const haveBreastMnist = NPZ !== undefined;

let images: { shape: number[]; data: Buffer } | undefined;
let train: { images: { shape: number[]; data: Buffer }; labels: { shape: number[]; data: Buffer } } | undefined;

/** Image i of BreastMNIST's validation split (or a synthetic one) as 28x28 grey pixels. */
export async function breastMnistPixels(i: number): Promise<Uint8Array> {
  if (haveBreastMnist) {
    images ??= (await readNpz(NPZ)).val_images;
    const [, h, w] = images.shape;
    return Uint8Array.from(images.data.subarray(i * h * w, (i + 1) * h * w));
  }
  return Uint8Array.from({ length: 28 * 28 }, (_, k) => (k * 7 + i * 31) % 256);
}

/** BreastMNIST's training split size (546 images), or the synthetic stand-in's (any i). */
export const BREASTMNIST_TRAIN = 546;

/**
 * Image i of BreastMNIST's training split with its label (1 benign or normal, 0 malignant, as MedMNIST gives it):
 * enough images for a model to be built from. Without the shared data set, a synthetic image whose label follows its
 * brightness, so a model still has something to learn.
 */
export async function breastMnistLabelled(i: number): Promise<{ pixels: Uint8Array; label: number }> {
  if (haveBreastMnist) {
    if (!train) {
      const npz = await readNpz(NPZ);
      train = { images: npz.train_images, labels: npz.train_labels };
    }
    const [, h, w] = train.images.shape;
    return { pixels: Uint8Array.from(train.images.data.subarray(i * h * w, (i + 1) * h * w)), label: train.labels.data[i] };
  }
  const label = i % 2;
  return { pixels: Uint8Array.from({ length: 28 * 28 }, (_, k) => (label ? 128 : 0) + ((k * 7 + i * 31) % 100)), label };
}

export interface SourceDicom {
  bytes: Buffer;
  study: string;
  series: string;
  instance: string;
}

/**
 * A BreastMNIST image as a Part 10 file, with the patient's attributes a hospital's file would carry; `place` puts it
 * in a given study and series (instance number `number`) with given pixels, else in a study of its own.
 */
export async function breastMnistDicom(
  i: number,
  patient = { name: "Pérez^Lucía", id: `BMN-${i}` },
  place: { study?: string; series?: string; number?: number; pixels?: Uint8Array } = {},
): Promise<SourceDicom> {
  const [study, series, instance] = [place.study ?? newUid(), place.series ?? newUid(), newUid()];
  const ds = dataSet({
    "00080005": el.str("CS", "ISO_IR 192"),
    "00080016": el.str("UI", "1.2.840.10008.5.1.4.1.1.7"),
    "00080018": el.str("UI", instance),
    "00080020": el.str("DA", "20261128"),
    "00080030": el.str("TM", "101500"),
    "00080050": el.str("SH", `ACC${i}`),
    "00080060": el.str("CS", "US"),
    "00080064": el.str("CS", "WSD"),
    "00080090": el.str("PN", ""),
    "00100010": el.str("PN", patient.name),
    "00100020": el.str("LO", patient.id),
    "00100030": el.str("DA", "19700101"),
    "00100040": el.str("CS", "F"),
    "0020000D": el.str("UI", study),
    "0020000E": el.str("UI", series),
    "00200010": el.str("SH", "1"),
    "00200011": el.str("IS", 1),
    "00200013": el.str("IS", place.number ?? 1),
    "00280002": { vr: "US", value: 1 },
    "00280004": el.str("CS", "MONOCHROME2"),
    "00280010": { vr: "US", value: 28 },
    "00280011": { vr: "US", value: 28 },
    "00280100": { vr: "US", value: 8 },
    "00280101": { vr: "US", value: 8 },
    "00280102": { vr: "US", value: 7 },
    "00280103": { vr: "US", value: 0 },
    "7FE00010": { vr: "OB", value: place.pixels ?? (await breastMnistPixels(i)) },
  });
  return { bytes: writePart10(ds, "utf8"), study, series, instance };
}
