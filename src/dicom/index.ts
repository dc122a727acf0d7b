import type { DicomRendering } from "../contract/types.js";
import type { DecodedImage } from "../serving/tensor.js";
import { codecsReady, loadCodecs } from "./codecs.js";
import { msg } from "../errors.js";
import { DicomError } from "./errors.js";
import { headerSummary, type DicomHeaderSummary } from "./header.js";
import { parseDicom } from "./parse.js";
import { firstFrame } from "./pixels.js";
import { DEFAULT_RENDERING, renderGrey } from "./render.js";

/**
 * DICOM in, the 8-bit image the rest of preprocessing takes out: parse (dicom-parser), decode the first frame
 * (native, RLE, JPEG, JPEG lossless, JPEG-LS, JPEG 2000), render per the manifest's input.image.dicom (or the
 * file's own window when the model has none). Serving then resizes and normalises it as it would a decoded PNG.
 */

export { DicomError } from "./errors.js";
export type { DicomHeaderSummary } from "./header.js";
export { isDicom } from "./parse.js";
export { DEFAULT_RENDERING } from "./render.js";
export { DECODED_SYNTAXES, describeSyntax, transferSyntax } from "./transfer-syntax.js";
export { codecMemoryBytes, loadCodecs } from "./codecs.js";

export interface RenderedDicom {
  image: DecodedImage;
  header: DicomHeaderSummary;
}

/**
 * Synchronous once loadCodecs() has resolved on this thread (decodeDicom does both). Refuses an image of more than
 * maxPixels before decoding any pixel: the header states its size, a compressed frame's own header must state the
 * same (pixels.ts), and a deflated data set inflates no further than such an image needs (parse.ts).
 */
export function decodeDicomSync(
  bytes: Uint8Array,
  rendering: DicomRendering | undefined,
  maxPixels = Infinity,
  opts: { bare?: boolean } = {},
): RenderedDicom {
  const d = parseDicom(bytes, { ...opts, maxPixels });
  const header = headerSummary(d);
  const { rows, columns } = d.pixel;
  if (rows * columns > maxPixels)
    throw new DicomError("image_too_many_pixels", msg("dicom.too_many_pixels", { size: `${columns}x${rows}`, max: maxPixels }));
  const frame = firstFrame(d);
  const image: DecodedImage =
    frame.kind === "rgb"
      ? { pixels: frame.rgb, width: frame.width, height: frame.height, channels: 3 }
      : renderGrey(d, frame, rendering ?? DEFAULT_RENDERING);
  return { image, header };
}

/** bare: a dataset without preamble and file meta is read too (dataset files named .dcm; see parseDicom). */
export async function decodeDicom(
  bytes: Uint8Array,
  rendering: DicomRendering | undefined,
  maxPixels = Infinity,
  opts: { bare?: boolean } = {},
): Promise<RenderedDicom> {
  // A codec dropped for its size by another decode on this thread since loadCodecs resolved is loaded again; the
  // check and the decode then run in one synchronous stretch.
  while (!codecsReady()) await loadCodecs();
  return decodeDicomSync(bytes, rendering, maxPixels, opts);
}

/** The header alone (no pixel decoding): for reports. Throws DicomError as decodeDicom does for a bad file. */
export function readDicomHeader(bytes: Uint8Array): DicomHeaderSummary {
  return headerSummary(parseDicom(bytes));
}
