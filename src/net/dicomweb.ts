import { msg } from "../errors.js";
import { refuse } from "./outbound-guard.js";

/**
 * DICOMweb WADO-RS (PS3.18 10.4): an instance is .../studies/{study}/series/{series}/instances/{instance}, answered
 * as multipart/related; type="application/dicom" (one part: the Part 10 file). A frame URL (.../frames/1) would be
 * answered with bare pixel data, without the header that says how to render it, so the instance is fetched instead
 * and its first frame rendered: serving scores the first frame, as the manifest's dicom.frames states.
 */

const INSTANCE = /\/studies\/[^/]+\/series\/[^/]+\/instances\/[^/?#]+/;
const FRAMES = /\/frames\/([^/?#]+)\/?$/;

/**
 * transfer-syntax=* asks for the file as the PACS stored it (PS3.18 8.7.3.5.2). Without it a conformant server
 * transcodes to Explicit VR Little Endian, and one that cannot decode the stored syntax fails: Orthanc answers a
 * JPEG 2000 instance with HTTP 500 (test/integration/predict-dicom.test.ts). Builder decodes every syntax it stores.
 */
export const DICOM_ACCEPT = 'multipart/related; type="application/dicom"; transfer-syntax=*';

/** The instance URL to fetch for a WADO-RS instance or frame URL, or null when the URL is not one. */
export function dicomWebInstanceUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!INSTANCE.test(url.pathname)) return null;
  const frames = FRAMES.exec(url.pathname);
  if (frames) {
    if (frames[1] !== "1") throw refuse(400, "unsupported_frame", msg("net.only_first_frame", { frames: frames[1] }));
    url.pathname = url.pathname.slice(0, frames.index);
  }
  return url.toString();
}

/**
 * The first part of a multipart/related answer (the DICOM file), or the body itself when the server answered with a
 * single application/dicom body, as some PACS do.
 */
export function firstMultipartPart(body: Buffer, contentType: string | undefined): Buffer {
  const type = (contentType ?? "").toLowerCase();
  if (!type.startsWith("multipart/")) return body;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw refuse(422, "invalid_dicomweb_answer", msg("net.multipart_no_boundary"));
  const delimiter = Buffer.from(`--${boundary}`);
  const first = body.indexOf(delimiter);
  if (first < 0) throw refuse(422, "invalid_dicomweb_answer", msg("net.multipart_no_part"));
  const headersEnd = body.indexOf("\r\n\r\n", first + delimiter.length);
  if (headersEnd < 0) throw refuse(422, "invalid_dicomweb_answer", msg("net.multipart_no_headers"));
  const start = headersEnd + 4;
  const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), start);
  if (next < 0) throw refuse(422, "invalid_dicomweb_answer", msg("net.multipart_not_closed"));
  return body.subarray(start, next);
}
