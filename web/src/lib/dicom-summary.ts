import type { DatasetReport } from "../api/types";

type DicomSummary = NonNullable<DatasetReport["summary"]["dicom"]>;

const counts = (m: Record<string, number>) =>
  Object.entries(m)
    .sort(([, a], [, b]) => b - a)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

/**
 * One line for the dataset report: what the DICOM files are (issue 41). Identifying headers are a warning of their
 * own in the problem table; this line only says how many files have them, never a value (the API has none).
 */
export function dicomSummaryLine(d: DicomSummary): string {
  const parts = [
    `${d.files} files`,
    `modality ${counts(d.modalities)}`,
    `transfer syntax ${counts(d.transfer_syntaxes)}`,
    `bits stored ${counts(d.bits_stored)}`,
    counts(d.photometric),
    d.pixel_spacing_mm ? `pixel spacing ${d.pixel_spacing_mm.min}–${d.pixel_spacing_mm.max} mm` : "no pixel spacing",
    d.frames.multi_frame_files ? `${d.frames.multi_frame_files} multi-frame (up to ${d.frames.max} frames)` : "single frame",
    `manufacturer ${counts(d.manufacturers)}`,
  ];
  return parts.join("; ");
}
