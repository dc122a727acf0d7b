import type { TFunction } from "i18next";
import type { DatasetReport } from "../api/types";
import { formatCount } from "./format";

type DicomSummary = NonNullable<DatasetReport["summary"]["dicom"]>;

const counts = (m: Record<string, number>) =>
  Object.entries(m)
    .sort(([, a], [, b]) => b - a)
    .map(([k, n]) => `${k} ${formatCount(n)}`)
    .join(", ");

/**
 * One line for the dataset report: what the DICOM files are (issue 41). Identifying headers are a warning of their
 * own in the problem table; this line only says how many files have them, never a value (the API has none).
 * `t` is the dataset namespace's translator.
 */
export function dicomSummaryLine(d: DicomSummary, t: TFunction<"dataset">): string {
  const parts = [
    t("summary.dicomFiles", { n: formatCount(d.files) }),
    t("summary.dicomModality", { v: counts(d.modalities) }),
    t("summary.dicomSyntax", { v: counts(d.transfer_syntaxes) }),
    t("summary.dicomBits", { v: counts(d.bits_stored) }),
    counts(d.photometric),
    d.pixel_spacing_mm
      ? t("summary.dicomSpacing", { min: d.pixel_spacing_mm.min, max: d.pixel_spacing_mm.max })
      : t("summary.dicomNoSpacing"),
    d.frames.multi_frame_files
      ? t("summary.dicomMultiFrame", { n: formatCount(d.frames.multi_frame_files), max: d.frames.max })
      : t("summary.dicomSingleFrame"),
    t("summary.dicomManufacturer", { v: counts(d.manufacturers) }),
  ];
  return parts.join("; ");
}
