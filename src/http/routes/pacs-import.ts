import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { resolveZipPath } from "../../datasets/zip-path.js";
import { experimentRequestFields, datasetFieldRules } from "../../experiments/request.js";
import { datasetTask } from "../../experiments/study.js";
import { IMAGE_COL, PacsImportAborted, type PacsImportFailure } from "../../pacs/import.js";
import type { Services } from "../../services.js";
import { say } from "../../errors.js";
import { errorBody, toApiError } from "../errors.js";
import { preferredLanguage } from "../error-language.js";
import { abortWhenCallerLeaves, sendEvent, startEventStreamOnce, wantsEventStream } from "../event-stream.js";
import { defineRoute } from "../route.js";
import { datasetReportSchema } from "../response-schemas.js";
import type { AuthInfo } from "../../auth/types.js";

// Build from the PACS (docs/pacs.md#building-a-dataset-from-the-pacs): a CSV of UIDs and labels in, a de-identified
// dataset zip in the caller's folder out, with the per-UID failures, what de-identification removed and replaced,
// and today's dataset report on the result. The zip is then given to POST /v1/experiments as an uploaded one.

const bodySchema = z
  .object({
    csv: z.string().min(1).max(2_000_000).describe("the CSV text: a header row, a UID column, the label and any other columns"),
    uid_col: z.string().min(1).max(200).default("uid").describe("the column of study, series or instance UIDs"),
    patient_col: z
      .string()
      .min(1)
      .max(200)
      .nullish()
      .describe("a column of patient pseudonyms; without it each source patient gets pacs-patient-N"),
    zip_gcloud: z.string().min(1).describe("where the dataset goes: <user_dir>/<experiment_dir>/<file>.zip"),
  })
  .extend(experimentRequestFields.pick({ label_cols: true, split_col: true, subgroup_cols: true, model_type: true }).shape)
  .extend({ model_type: experimentRequestFields.shape.model_type.default(0) })
  .superRefine((b, ctx) => datasetFieldRules(datasetFields(b), ctx));

/** The dataset the import writes, as the experiment request would name it: images in IMAGE_COL, classification or regression. */
function datasetFields(b: { label_cols: string[]; split_col?: string | null; subgroup_cols?: string[] | null; model_type: 0 | 1 }) {
  return { ...b, task: "vision" as const, type_of_experiment: "classification" as const, images_col: IMAGE_COL, data_cols: null };
}

const failureSchema = z.object({ row: z.number(), uid: z.string(), reason: z.string(), reason_es: z.string() });

export const pacsImportRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/datasets/from-pacs",
    auth: "any",
    scope: "build",
    summary:
      "Build a dataset from your PACS: the CSV's UIDs retrieved by QIDO-RS and WADO-RS, de-identified (PS3.15 basic profile), zipped into your folder and checked",
    tags: ["datasets", "pacs"],
    body: bodySchema,
    responses: {
      201: {
        description: "stored (the UIDs that failed are named); build from zip_gcloud with images_col 'image'",
        schema: z.object({
          zip_gcloud: z.string(),
          size: z.number(),
          sha256: z.string(),
          images_col: z.string(),
          rows: z.number(),
          instances: z.number(),
          failed: z.array(failureSchema),
          deidentification: z.object({
            profile: z.string(),
            replaced: z.array(z.object({ attribute: z.string(), with: z.string(), instances: z.number() })),
            removed: z.array(z.object({ attribute: z.string(), instances: z.number() })),
            private_removed: z.number().describe("private attributes removed, all instances together"),
          }),
          report: datasetReportSchema,
        }),
      },
      200: {
        description:
          "with Accept: text/event-stream: `event: progress` ({phase: locating | retrieving | storing | checking, done, total, failed}) at most every 250 ms, `event: failed` (a row that could not be used: row, uid, reason, reason_es) as each happens, then `event: done` with the 201 body; a failure after the first event is `event: error` with the error body",
        contentType: "text/event-stream",
      },
      404: { description: "no PACS is configured" },
      422: { description: "pacs_import_empty: no instance could be retrieved (each UID's reason given); too_many_instances" },
    },
    handler: async ({ body, auth, services, req, res }) => {
      const objectPath = resolveZipPath(body.zip_gcloud, auth.workspace.storagePrefix);
      const abort = abortWhenCallerLeaves(res);
      if (!wantsEventStream(req.get("accept"))) {
        try {
          return { status: 201, body: await importAndCheck(services, auth, objectPath, body, { signal: abort.signal }) };
        } catch (err) {
          if (err instanceof PacsImportAborted) return void res.end(); // the caller left: nothing was stored, nobody to tell
          throw err;
        }
      }
      const start = startEventStreamOnce(res);
      try {
        const result = await importAndCheck(services, auth, objectPath, body, {
          signal: abort.signal,
          onProgress: (p) => (start(), sendEvent(res, "progress", p)),
          onFailure: (f) => (start(), sendEvent(res, "failed", withSpanish(f))),
          onChecking: () => (start(), sendEvent(res, "progress", { phase: "checking", done: 0, total: 1, failed: 0 })),
        });
        start();
        sendEvent(res, "done", result);
      } catch (err) {
        if (abort.signal.aborted || err instanceof PacsImportAborted) return void res.end(); // the caller left; nobody to tell
        if (!res.headersSent) throw err;
        sendEvent(res, "error", errorBody(toApiError(err), preferredLanguage(req.get("accept-language"))));
      }
      res.end();
    },
  }),
];

/** Each reason in Spanish too, from the catalog (a message from the PACS itself stays as it came). */
const withSpanish = ({ text, ...f }: PacsImportFailure) => ({ ...f, reason_es: say(text, "es") });

type ImportBody = z.infer<typeof bodySchema>;

/** The import, its audit entry and today's dataset check on the zip: the 201 body (or the stream's `done`). */
async function importAndCheck(
  services: Services,
  auth: AuthInfo,
  objectPath: string,
  body: ImportBody,
  watch: Parameters<Services["pacsImport"]["run"]>[3] & { onChecking?: () => void },
) {
  const result = await services.pacsImport.run(auth, objectPath, body, watch);
  // Audited as the upload it stands for, with where it came from (no UID: the log holds no patient data).
  await services.audit.record(actorOf(auth), "file_uploaded", undefined, {
    size: result.size,
    sha256: result.sha256,
    source: "pacs",
    instances: result.instances,
    failed: result.failed.length,
  });
  watch.onChecking?.();
  const report = await services.datasets.validate(auth, objectPath, datasetTask(datasetFields(body)));
  return { ...result, failed: result.failed.map(withSpanish), images_col: IMAGE_COL, report };
}
