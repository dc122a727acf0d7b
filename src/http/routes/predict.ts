import { z } from "zod";
import { ApiError } from "../../errors.js";
import { experimentId, experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";
import { MAX_MESSAGE_VALUES, MAX_PREDICT_BODY_VALUES, predictBodyLimits } from "../json-request-body.js";
import { predictionSchema } from "../response-schemas.js";

// POST /v1/experiments/{experiment_id}/predict (canonical) and POST /predict (the seed's form, where the model
// is named by experiment_id in the body, the x-experiment-id header or the experiment_id query parameter).

const message = z.union(
  [z.string().min(1, "must not be empty"), z.array(z.unknown()).max(MAX_MESSAGE_VALUES, `at most ${MAX_MESSAGE_VALUES} values`)],
  {
    error: "message must be an image URI (string) or, for tabular models, an array of numbers in data_cols order",
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
  400: failure("bad body or message (wrong length, NaN, string, unknown category; bad URI; undecodable image)"),
  401: failure("missing or invalid API key"),
  403: failure("revoked API key; refused image link (private address, host not allowed)"),
  404: failure("no such experiment (or not yours), or an image object that is not yours"),
  409: failure("model_not_ready: the experiment exists but has no published model yet (queued, running, failed or cancelled)"),
  413: failure(
    `body, image or pixel count over the limits; more than ${MAX_PREDICT_BODY_VALUES} JSON values in the body (too_many_values)`,
  ),
  429: failure("rate limit exceeded"),
  415: failure("the image cannot be decoded, or its type is not supported"),
  422: failure("the image link could not be fetched (unreachable host, HTTP error, timeout, too many redirects)"),
};

export const predictRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/predict",
    auth: "any",
    mountFirst: true,
    plain: true, // served by the /predict lane too (predict-lane.ts): the handler reads only the method and headers
    jsonBody: predictBodyLimits,
    summary: "Predict with the current model version of an experiment (the newest published, unless an earlier one was made current again)",
    tags: ["prediction"],
    params: experimentIdParams,
    body: z.object({ message }),
    responses: answer,
    errorSchema: predictErrorSchema,
    handler: async ({ services, auth, params, body }) => ({
      status: 201,
      body: await services.serving.predict(auth.userId, params.experiment_id, body.message, { keyId: auth.keyId }),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/predict",
    auth: "any",
    mountFirst: true,
    plain: true,
    jsonBody: predictBodyLimits,
    summary: "Predict (seed form): the model is named by experiment_id in the body, the x-experiment-id header or the query",
    tags: ["prediction"],
    query: z.object({ experiment_id: experimentId.optional() }),
    body: z.object({ message, experiment_id: experimentId.optional() }),
    responses: answer,
    errorSchema: predictErrorSchema,
    handler: async ({ req, services, auth, query, body }) => {
      const header = req.get("x-experiment-id");
      let id = body.experiment_id ?? query.experiment_id;
      if (id === undefined && header !== undefined) {
        const parsed = experimentId.safeParse(header);
        if (!parsed.success) {
          throw new ApiError(400, "invalid_request", "x-experiment-id must be a positive integer", [
            { field: "x-experiment-id", message: "must be a positive integer" },
          ]);
        }
        id = parsed.data;
      }
      if (id === undefined) {
        throw new ApiError(
          400,
          "missing_experiment_id",
          "name the model: experiment_id in the body, the x-experiment-id header or the experiment_id query parameter",
          [{ field: "experiment_id", message: "required" }],
        );
      }
      return { status: 201, body: await services.serving.predict(auth.userId, id, body.message, { keyId: auth.keyId }) };
    },
  }),
];
