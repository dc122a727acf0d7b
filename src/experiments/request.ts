import { createHash } from "node:crypto";
import { z } from "zod";
import { ObjectPathError, objectPathSegments, withoutBucketUri } from "../storage/bucket.js";
import { invalid, msg } from "../errors.js";
import { ruleIssue } from "../i18n/rule-text.js";
import { dicomFramesField, dicomWindowField } from "./dicom-options.js";
import {
  experimentDescription,
  experimentIntendedUse,
  experimentName,
  experimentRequestRules,
  experimentRequestShape,
} from "./request-rules.js";

// POST /v1/experiments: the seed's fields, each validated; cross-field rules are added with superRefine so that
// every bad field still lands in the one 400 (zod reports them all together). The fields and rules that need nothing
// but zod live in request-rules.ts, which the dashboard's form shares; this file adds what needs the server.

export {
  datasetFieldRules,
  DESCRIPTION_MAX,
  experimentDescription,
  experimentIntendedUse,
  experimentName,
  INTENDED_USE_MAX,
  NAME_MAX,
  OPTIMIZATION_METRIC_DOC,
  POSITIVE_CLASS_DOC,
  SEARCH_MAX,
  SPLIT_COL_DOC,
  SUBGROUP_BINS_DOC,
  SUBGROUP_COLS_DOC,
} from "./request-rules.js";

/** The seed's fields, one rule each; `pick` from here for any route that takes some of them (datasets/validate). */
export const experimentRequestFields = z.object({
  ...experimentRequestShape,
  zip_gcloud: experimentRequestShape.zip_gcloud.superRefine((value, ctx) => {
    try {
      objectPathSegments(zipObjectPath(value));
    } catch (err) {
      const why = err instanceof ObjectPathError ? err.text : msg("internal");
      const words = ruleIssue("validation.request.not_bucket_path", { why });
      ctx.addIssue({ code: "custom", message: words.message, params: { text: words.text } });
    }
    if (!/\.zip$/i.test(value)) ctx.addIssue({ code: "custom", message: invalid("validation.request.zip_file") });
  }),
  dicom_window: dicomWindowField.nullish(),
  dicom_frames: dicomFramesField.nullish(),
});

/** PATCH /v1/experiments/{experiment_id}: null clears a field, an absent one is left as it is. */
export const experimentLabelsPatchSchema = z
  .object({
    name: experimentName.nullable().optional(),
    description: experimentDescription.nullable().optional(),
    intended_use: experimentIntendedUse.nullable().optional(),
  })
  .strict()
  .refine(
    (p) => p.name !== undefined || p.description !== undefined || p.intended_use !== undefined,
    invalid("validation.request.labels_patch"),
  );

export type ExperimentLabels = { name?: string | null; description?: string | null; intended_use?: string | null };

export const experimentRequestSchema = experimentRequestFields
  .extend({ name: experimentName.nullish(), description: experimentDescription.nullish() })
  .strict()
  .superRefine(experimentRequestRules);

export type ExperimentRequestInput = z.input<typeof experimentRequestSchema>;
/** The request as stored: never holds user_token; name and description live in their own columns. */
export type ExperimentRequest = Omit<z.output<typeof experimentRequestSchema>, "user_token" | "name" | "description">;

/**
 * The request to store and hash, and the labels apart. Name and description are left out of the request hash on
 * purpose: they are labels the owner may edit later (PATCH), not part of what is trained. So a retried identical
 * POST is still answered with the same experiment (200), and so is a retry whose label was changed in between;
 * that answer carries the stored labels (a re-post never overwrites them: PATCH does that).
 */
export function splitRequest(r: z.output<typeof experimentRequestSchema>): { request: ExperimentRequest; labels: ExperimentLabels } {
  const { user_token: _dropped, name, description, ...request } = r;
  return { request, labels: { name: name ?? null, description: description ?? null } };
}

/** The request as stored (see splitRequest). */
export function withoutToken(r: z.output<typeof experimentRequestSchema>): ExperimentRequest {
  return splitRequest(r).request;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && v !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** Same normalised request (key order, nulls, defaults, study_type case) => same hash: the idempotency key. */
export function requestHash(r: ExperimentRequest): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(r)))
    .digest("hex");
}

/** zip_gcloud may be `gs://<bucket>/<path>` (`s3://<bucket>/<path>`) or the bare object path. */
export function zipObjectPath(zipGcloud: string): string {
  return withoutBucketUri(zipGcloud);
}
