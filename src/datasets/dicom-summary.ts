import type { ImageInfo } from "./images.js";
import { problem, type DicomDatasetSummary, type ReportBuilder } from "./report.js";

/**
 * The dataset report's DICOM part: what the files are (modality, manufacturer, transfer syntax, bits, photometric
 * interpretation, pixel spacing, frames) as counts and ranges, and warnings when headers hold patient-identifying
 * values or the pixels carry burned-in text. It counts tags and files and never holds a header's value: the
 * summaries it reads (src/dicom/header.ts) do not have them.
 */
const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

export function reportDicom(infos: Map<string, ImageInfo>, report: ReportBuilder): void {
  const s: DicomDatasetSummary = {
    files: 0,
    modalities: {},
    manufacturers: {},
    transfer_syntaxes: {},
    bits_stored: {},
    photometric: {},
    pixel_spacing_mm: null,
    frames: { min: Infinity, max: 0, multi_frame_files: 0 },
    identifying_headers: {},
    burned_in_annotation: 0,
  };
  let firstIdentifying: string | undefined;
  let firstBurnedIn: string | undefined;
  for (const [img, info] of infos) {
    if ("error" in info || !info.dicom) continue;
    const h = info.dicom;
    s.files++;
    bump(s.modalities, h.modality ?? "(none)");
    bump(s.manufacturers, h.manufacturer ?? "(none)");
    bump(s.transfer_syntaxes, `${h.transferSyntax} (${h.transferSyntaxUid})`);
    bump(s.bits_stored, `${h.bitsStored}${h.signed ? " signed" : ""}`);
    bump(s.photometric, h.photometric);
    if (h.pixelSpacing) {
      const p = (s.pixel_spacing_mm ??= { min: Infinity, max: 0, files: 0 });
      p.min = Math.min(p.min, h.pixelSpacing[0]);
      p.max = Math.max(p.max, h.pixelSpacing[0]);
      p.files++;
    }
    s.frames.min = Math.min(s.frames.min, h.frames);
    s.frames.max = Math.max(s.frames.max, h.frames);
    if (h.frames > 1) s.frames.multi_frame_files++;
    for (const tag of h.identifyingTags) bump(s.identifying_headers, tag);
    if (h.identifyingTags.length) firstIdentifying ??= img;
    if (h.burnedInAnnotation) {
      s.burned_in_annotation++;
      firstBurnedIn ??= img;
    }
  }
  if (!s.files) return;
  report.summary.dicom = s;
  const tags = Object.entries(s.identifying_headers);
  if (tags.length)
    report.warn(
      "dicom_identifying_headers",
      problem("dataset.dicom_identifying_headers", { tags: tags.map(([t, n]) => `${t} (${n})`).join(", ") }),
      { path: firstIdentifying },
    );
  if (s.burned_in_annotation)
    report.warn("dicom_burned_in_annotation", problem("dataset.dicom_burned_in_annotation", { count: s.burned_in_annotation }), {
      path: firstBurnedIn,
    });
}
