import { z } from "zod";
import type { Manifest } from "../../contract/types.js";
import type { ModelRow } from "../../experiments/service.js";
import type { Services } from "../../services.js";
import { BucketNotFoundError } from "../../storage/bucket.js";
import { ApiError, msg, invalid } from "../../errors.js";
import { defineRoute } from "../route.js";
import { subgroupsSchema } from "../response-schemas.js";
import { pageSecurityHeaders } from "../page-security.js";
import { modelCardPage } from "../../reports/model-card-page.js";
import { reportLanguage } from "../../reports/i18n.js";
import { preferredLanguage } from "../error-language.js";
import type { AuthInfo } from "../../auth/types.js";

// The evaluation report a pipeline publishes beside its model (report.json and its figures), served to the
// experiment's owner. Another user's experiment is 404, like every other route (services.experiments.get).

const params = z.object({ experiment_id: z.coerce.number().int().positive(invalid("detail.positive_integer")).max(2_147_483_647) });
const figureParams = params.extend({
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, invalid("validation.figure_name")),
});
const REPORT_MAX_BYTES = 32 * 1024 * 1024;
const FIGURE_TYPES: Record<string, string> = { svg: "image/svg+xml", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg" };

/** The model this very experiment published (a later re-run of the same experiment_id does not count). */
async function ownModel(services: Services, auth: AuthInfo, experimentId: number): Promise<ModelRow> {
  const row = await services.experiments.get(auth, experimentId);
  const model = await services.experiments.latestModel(auth, experimentId);
  if (!model || model.experimentUuid !== row.id) {
    throw new ApiError(404, "not_found", msg("experiment.no_report_yet", { id: experimentId, status: row.status }));
  }
  return model;
}

/** An object beside the model's manifest (storePath may end with a slash). */
const besideModel = (model: ModelRow, file: string) => `${model.storePath.replace(/\/+$/, "")}/${file}`;

async function readObject(services: Services, objectPath: string, what: "report" | "figure"): Promise<Buffer> {
  const st = await services.bucket.stat(objectPath);
  if (!st) throw new ApiError(404, "not_found", msg(`report.missing_${what}`));
  if (st.size > REPORT_MAX_BYTES) throw new ApiError(500, "internal_error", msg(`report.${what}_too_large`, { max: REPORT_MAX_BYTES }));
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of await services.bucket.read(objectPath)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if (err instanceof BucketNotFoundError) throw new ApiError(404, "not_found", msg(`report.missing_${what}`));
    throw err;
  }
}

// report.html is a page a browser renders: the dashboard's headers (no framing, no sniffing, no script at all).
const CARD_PAGE_HEADERS = { ...pageSecurityHeaders(), "cache-control": "private, no-cache" };
const section = z.record(z.string(), z.unknown());
const modelCardSchema = z.looseObject({
  card_version: z.number(),
  experiment_id: z.number(),
  title: z.string(),
  model_version: z.number(),
  generated_at: z.string(),
  intended_use: z.object({ text: z.string().nullable(), written_by: z.string() }),
  data: section.describe("data source and dates: file, submitted, rows, patients, images, class counts"),
  split: section.describe("patients and rows per part, and how they were split"),
  preprocessing: section,
  model: section.describe("model family and why it was chosen (the pipeline's selection reason)"),
  performance: section.describe("test figures with 95% intervals at the operating point, validation figures, the confusion matrix"),
  calibration: section,
  subgroups: subgroupsSchema
    .nullable()
    .describe(
      "test performance per group of each subgroup column the request named; null when it named none (then listed under calibration.not_yet)",
    ),
  warnings: z.array(z.object({ code: z.string(), severity: z.string(), title: z.string(), message: z.string() })),
  limitations: z.array(z.string()),
  retrospective: z.array(section).describe("ready Retrospective studies of this model, beside the internal figures"),
});

const figureSchema = z.object({ name: z.string(), title: z.string(), url: z.string().describe("GET it with the same credentials") });

export const reportRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/report",
    auth: "any",
    scope: "read",
    summary:
      "The evaluation report of a ready experiment: report.json (curves, confusion matrix, calibration, training curves) and its figures",
    tags: ["experiments"],
    params,
    responses: {
      200: {
        description: "the report",
        schema: z.object({
          experiment_id: z.number(),
          model_version: z.number(),
          figures: z.array(figureSchema),
          report: z
            .record(z.string(), z.unknown())
            .nullable()
            .describe("report.json as the pipeline wrote it; null when the pipeline wrote none"),
        }),
      },
      404: { description: "not your experiment, or not ready yet" },
    },
    handler: async ({ services, auth, params }) => {
      const model = await ownModel(services, auth, params.experiment_id);
      const manifest = model.manifest as Manifest;
      const base = `/v1/experiments/${params.experiment_id}/figures`;
      const figures = (manifest.figures ?? []).map((f) => ({ name: f.name, title: f.title, url: `${base}/${encodeURIComponent(f.name)}` }));
      const report = manifest.report_file
        ? (JSON.parse((await readObject(services, besideModel(model, manifest.report_file), "report")).toString("utf8")) as Record<
            string,
            unknown
          >)
        : null;
      return {
        headers: { "cache-control": "private, no-cache" },
        body: { experiment_id: params.experiment_id, model_version: model.version, figures, report },
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/model-card",
    auth: "any",
    scope: "read",
    summary:
      "The model card of a ready experiment, organised after TRIPOD+AI: intended use, data, split, preprocessing, model, performance with intervals, calibration, warnings and limitations, Retrospective results",
    tags: ["experiments"],
    params,
    responses: {
      200: { description: "the model card", schema: modelCardSchema },
      404: { description: "not your experiment, or not ready yet" },
    },
    handler: async ({ services, auth, params }) => ({
      headers: { "cache-control": "private, no-cache" },
      body: await services.experiments.modelCard(auth, params.experiment_id),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/report.html",
    auth: "any",
    scope: "read",
    summary:
      "The model card as a printable, self-contained HTML page (inline CSS, no script), in Spanish or English (?lang=, else Accept-Language), with its Monitoring section",
    tags: ["experiments"],
    params,
    query: z.object({
      lang: z
        .enum(["en", "es"], { error: invalid("validation.en_or_es") })
        .optional()
        .describe("the page's language; default: Accept-Language, else English"),
    }),
    responses: {
      200: { description: "the page", contentType: "text/html" },
      404: { description: "not your experiment, or not ready yet" },
    },
    handler: async ({ services, auth, params, query, req, res }) => {
      const lang = reportLanguage(query.lang) ?? preferredLanguage(req.headers["accept-language"]);
      const deps = { ...services, retentionDays: services.config.PREDICTION_RETENTION_DAYS };
      const html = await modelCardPage(deps, auth, params.experiment_id, lang);
      res
        .status(200)
        .set({ ...CARD_PAGE_HEADERS, "content-language": lang, vary: "Accept-Language" })
        .type("text/html; charset=utf-8")
        .send(html);
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/figures/{name}",
    auth: "any",
    scope: "read",
    summary: "One figure of the report (SVG or PNG), by its name in the report's figures list",
    tags: ["experiments"],
    params: figureParams,
    responses: { 200: { description: "the image", contentType: "image/svg+xml" } },
    handler: async ({ services, auth, params, res }) => {
      const model = await ownModel(services, auth, params.experiment_id);
      const figure = ((model.manifest as Manifest).figures ?? []).find((f) => f.name === params.name);
      if (!figure) throw new ApiError(404, "not_found", msg("experiment.no_figure", { id: params.experiment_id, name: params.name }));
      const type = FIGURE_TYPES[figure.file.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
      const bytes = await readObject(services, besideModel(model, figure.file), "figure");
      // An SVG opened on its own must not run script on our origin: the sandbox CSP makes it inert.
      res.status(200).set({
        "content-type": type,
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        "x-content-type-options": "nosniff",
        "cache-control": "private, max-age=3600",
      });
      res.end(bytes);
    },
  }),
];
