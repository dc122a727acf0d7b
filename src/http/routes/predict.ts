import { z } from "zod";
import { ApiError, msg, detail, invalid } from "../../errors.js";
import { experimentId, experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";
import { MAX_MESSAGE_VALUES, MAX_PREDICT_BODY_VALUES, predictBodyLimits } from "../json-request-body.js";
import { predictionSchema } from "../response-schemas.js";
import { actorOf } from "../../audit/audit-log.js";
import { JsonBytes } from "../../serving/json-encode.js";
import type { Services } from "../../services.js";
import type { AuthInfo } from "../../auth/types.js";
import { inputCheckHeaders } from "../../serving/input-check.js";
import { assertKeyModel } from "../../auth/key-scopes.js";

// POST /v1/experiments/{experiment_id}/predict (canonical) and POST /predict (the seed's form, where the model
// is named by experiment_id in the body, the x-experiment-id header or the experiment_id query parameter).

const message = z.union(
  [
    z.string().min(1, invalid("validation.not_empty")),
    z.array(z.unknown()).max(MAX_MESSAGE_VALUES, invalid("validation.at_most_values", { max: MAX_MESSAGE_VALUES })),
  ],
  {
    error: invalid("validation.predict_message"),
  },
);

/** The seed's failed-prediction body: `error` is 1 and code, message, type sit beside it (details for bad fields). */
export const predictErrorSchema = z.object({
  error: z.literal(1),
  code: z.string(),
  message: z.string(),
  type: z.string(),
  details: z.array(z.record(z.string(), z.unknown())).optional(),
});

const failure = (description: string) => ({ description, schema: predictErrorSchema });

const answer = {
  201: {
    schema: predictionSchema,
    description:
      "vision: prediccion, score, classes, error 0, columnas, filas, gradients; detection: boxes, score, classification, error 0, classes; " +
      "tabular: prediccion, score, classes, error 0 (regression: prediccion [value], score [value])",
  },
  400: failure(
    "bad body or message (wrong length, NaN, string, unknown category; bad URI; undecodable image); send_back_unavailable: send_back=true without a PACS, or on a link that is not a DICOMweb instance of it",
  ),
  401: failure("missing or invalid API key; api_key_expired: the key's expiry has passed"),
  403: failure(
    "revoked API key; api_key_scope_missing: the key has no predict scope; api_key_model_not_allowed: the key is limited to other models; refused image link (private address, host not allowed)",
  ),
  404: failure("no such experiment (or not yours), or an image object that is not yours"),
  409: failure("model_not_ready: the experiment exists but has no published model yet (queued, running, failed or cancelled)"),
  413: failure(
    `body, image or pixel count over the limits; more than ${MAX_PREDICT_BODY_VALUES} JSON values in the body (too_many_values)`,
  ),
  429: failure("rate limit exceeded"),
  415: failure("the image cannot be decoded, or its type is not supported"),
  422: failure(
    "the image link could not be fetched (unreachable host, HTTP error, timeout, too many redirects); unfamiliar_input: the model is set to refuse inputs unlike its training data (x-input-check)",
  ),
};

/**
 * send_back=true: the answer is also written into the PACS the DICOMweb link points at (docs/pacs.md), after this
 * answer, which is the same body either way; the x-builder-pacs header says "sending". Unset: the model's setting.
 */
const sendBack = z
  .enum(["true", "false", "1", "0"], invalid("validation.send_back_true_or_false"))
  .transform((v) => v === "true" || v === "1")
  .optional()
  .describe(
    "true: also write the answer (a DICOM SR, and a secondary capture) back into your PACS; the 201 body is unchanged. Unset: the model's setting (PUT /v1/models/{id}/pacs)",
  );

/** The prediction, and its answer sent back to the PACS when asked (per call or by the model's setting). */
async function predictAndSendBack(services: Services, auth: AuthInfo, id: number, message: unknown, requested: boolean | undefined) {
  // A key limited to some models: the model is known only here (the seed form names it in the body or a header).
  assertKeyModel(auth, id);
  const plan = await services.pacsSendBack.plan(auth, id, message, requested);
  // Where the workspace asks for approval, a version answers other members' keys only once approved (issue 50).
  const keyMadeBy = auth.via === "api_key" ? auth.userId : undefined;
  if (!plan) {
    const answer = await services.serving.predict(auth, id, message, { keyId: auth.keyId, keyMadeBy });
    return { status: 201, body: answer, headers: inputCheckHeaders(answer) };
  }
  let source: Buffer | undefined;
  const body = await services.serving.predict(auth, id, message, { keyId: auth.keyId, keyMadeBy, onSource: (b) => (source = b) });
  // Read now: an image answer's bytes are reused once written to the socket.
  const answer = (body instanceof JsonBytes ? body.toJSON() : body) as Record<string, unknown>;
  const model = await services.serving.model(auth, id);
  services.pacsSendBack.schedule(plan, actorOf(auth), answer, source!, model);
  return { status: 201, headers: { ...inputCheckHeaders(body), "x-builder-pacs": "sending" }, body };
}

export const predictRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/predict",
    auth: "any",
    scope: "predict",
    mountFirst: true,
    plain: true, // served by the /predict lane too (predict-lane.ts): the handler reads only the method and headers
    jsonBody: predictBodyLimits,
    summary: "Predict with the current model version of an experiment (the newest published, unless an earlier one was made current again)",
    tags: ["prediction"],
    params: experimentIdParams,
    query: z.object({ send_back: sendBack }),
    body: z.object({ message }),
    responses: answer,
    errorSchema: predictErrorSchema,
    handler: async ({ services, auth, params, query, body }) =>
      predictAndSendBack(services, auth, params.experiment_id, body.message, query.send_back),
  }),
  defineRoute({
    method: "post",
    path: "/predict",
    auth: "any",
    scope: "predict",
    mountFirst: true,
    plain: true,
    jsonBody: predictBodyLimits,
    summary: "Predict (seed form): the model is named by experiment_id in the body, the x-experiment-id header or the query",
    tags: ["prediction"],
    query: z.object({ experiment_id: experimentId.optional(), send_back: sendBack }),
    body: z.object({ message, experiment_id: experimentId.optional() }),
    responses: answer,
    errorSchema: predictErrorSchema,
    handler: async ({ req, services, auth, query, body }) => {
      const header = req.get("x-experiment-id");
      let id = body.experiment_id ?? query.experiment_id;
      if (id === undefined && header !== undefined) {
        const parsed = experimentId.safeParse(header);
        if (!parsed.success) {
          throw new ApiError(400, "invalid_request", msg("request.x_experiment_id"), [
            detail("x-experiment-id", msg("detail.positive_integer")),
          ]);
        }
        id = parsed.data;
      }
      if (id === undefined) {
        throw new ApiError(400, "missing_experiment_id", msg("request.missing_experiment_id"), [
          detail("experiment_id", msg("detail.required")),
        ]);
      }
      return predictAndSendBack(services, auth, id, body.message, query.send_back);
    },
  }),
];
