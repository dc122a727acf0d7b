import fs from "node:fs";
import { z } from "zod";
import type { DicomFrames, DicomWindow } from "../contract/types.js";
import { invalid } from "../errors.js";
import { ruleIssue } from "../i18n/rule-text.js";

// dicom_window and dicom_frames on POST /v1/experiments (issue 41): how DICOM training images become grey levels.
// The named windows live in pipelines/contract/dicom-window-presets.json, read here and by the pipelines, so both
// languages know the same presets; the study stores a preset with its center and width written out, so a later edit
// of the table never changes what an accepted experiment trains on.

interface PresetFile {
  presets: Record<string, { center: number; width: number }>;
}

export const DICOM_WINDOW_PRESETS: Readonly<Record<string, { center: number; width: number }>> = (
  JSON.parse(fs.readFileSync(new URL("../../pipelines/contract/dicom-window-presets.json", import.meta.url), "utf8")) as PresetFile
).presets;

const PRESET_NAMES = Object.keys(DICOM_WINDOW_PRESETS);
const presetList = () => PRESET_NAMES.map((n) => `${n} (${DICOM_WINDOW_PRESETS[n].center}/${DICOM_WINDOW_PRESETS[n].width})`).join(", ");

export const DICOM_WINDOW_DOC =
  'DICOM images only: the VOI window that turns their values (after RescaleSlope/Intercept) into grey levels. "file" (default): ' +
  "each file's own first WindowCenter/WindowWidth, or its own minimum..maximum when it has none; a preset name, center/width " +
  `in modality units (Hounsfield for CT): ${presetList()}; or {"center": c, "width": w} (width at least 1). ` +
  "The manifest records the window so prediction renders DICOMs the same way (docs/datasets.md#dicom).";

export const DICOM_FRAMES_DOC =
  'Multi-frame DICOM files: "first" (default) trains on the first frame; "all" makes every frame a training image of the ' +
  "same patient (so they stay in the same split part). Prediction scores the first frame either way.";

const explicitWindow = z
  .object({
    center: z.number({ error: invalid("validation.request.dicom_center") }).finite(),
    width: z
      .number({ error: invalid("validation.request.dicom_width") })
      .finite()
      .min(1, invalid("validation.request.dicom_width_min")),
  })
  .strict();

export const dicomWindowField = z
  .union([z.string(), explicitWindow], {
    error: invalid("validation.request.dicom_window", { presets: PRESET_NAMES.join(", ") }),
  })
  .superRefine((value, ctx) => {
    if (typeof value === "string" && value !== "file" && !(value in DICOM_WINDOW_PRESETS)) {
      const words = ruleIssue("validation.request.dicom_window_name", { presets: PRESET_NAMES.join(", "), value });
      ctx.addIssue({ code: "custom", message: words.message, params: { text: words.text } });
    }
  })
  .describe(DICOM_WINDOW_DOC);

export const dicomFramesField = z.enum(["first", "all"], { error: invalid("validation.request.dicom_frames") }).describe(DICOM_FRAMES_DOC);

export type DicomWindowRequest = z.output<typeof dicomWindowField>;

/** The spec's options.dicom from the request's two fields (each absent: its default). */
export function dicomOptions(
  window: DicomWindowRequest | undefined | null,
  frames: DicomFrames | undefined | null,
): {
  window: DicomWindow;
  frames: DicomFrames;
} {
  let resolved: DicomWindow = { source: "file" };
  if (typeof window === "object" && window !== null) resolved = { source: "explicit", center: window.center, width: window.width };
  else if (typeof window === "string" && window !== "file") resolved = { source: "preset", name: window, ...DICOM_WINDOW_PRESETS[window] };
  return { window: resolved, frames: frames ?? "first" };
}

/** The study's stored form (parsed again by the job). */
export const dicomStudySchema = z
  .object({
    window: z
      .object({
        source: z.enum(["file", "preset", "explicit"]),
        name: z.string().optional(),
        center: z.number().optional(),
        width: z.number().min(1).optional(),
      })
      .strict(),
    frames: z.enum(["first", "all"]),
  })
  .strict();
