import { z } from "zod";
import { ApiError } from "../../errors.js";
import { experimentId, experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";

// POST /v1/experiments/{experiment_id}/predict (canonical) and POST /predict (the seed's form, where the model
// is named by experiment_id in the body, the x-experiment-id header or the experiment_id query parameter).

const message = z.union([z.string().min(1, "must not be empty"), z.array(z.unknown())], {
  error: "message must be an image URI (string) or, for tabular models, an array of numbers in data_cols order",
});

const answer = {
  201: {
    description:
      "vision: prediccion, score, classes, error 0, columnas, filas, gradients; detection: boxes, score, classification, error 0, classes; " +
      "tabular: prediccion, score, classes, error 0 (regression: prediccion [value], score [value])",
  },
  400: { description: "bad message (wrong length, NaN, string, unknown category; bad URI)" },
  404: { description: "no published model for this experiment (or not yours)" },
};

export const predictRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/predict",
    auth: "any",
    summary: "Predict with the newest published model of an experiment",
    tags: ["prediction"],
    params: experimentIdParams,
    body: z.object({ message }),
    responses: answer,
    handler: async ({ services, auth, params, body }) => ({
      status: 201,
      body: await services.serving.predict(auth.userId, params.experiment_id, body.message),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/predict",
    auth: "any",
    summary: "Predict (seed form): the model is named by experiment_id in the body, the x-experiment-id header or the query",
    tags: ["prediction"],
    query: z.object({ experiment_id: experimentId.optional() }),
    body: z.object({ message, experiment_id: experimentId.optional() }),
    responses: answer,
    handler: async ({ req, services, auth, query, body }) => {
      const header = req.get("x-experiment-id");
      let id = body.experiment_id ?? query.experiment_id;
      if (id === undefined && header !== undefined) {
        const parsed = experimentId.safeParse(header);
        if (!parsed.success) {
          throw new ApiError(400, "invalid_request", "x-experiment-id must be a positive integer", [{ field: "x-experiment-id", message: "must be a positive integer" }]);
        }
        id = parsed.data;
      }
      if (id === undefined) {
        throw new ApiError(400, "missing_experiment_id", "name the model: experiment_id in the body, the x-experiment-id header or the experiment_id query parameter", [
          { field: "experiment_id", message: "required" },
        ]);
      }
      return { status: 201, body: await services.serving.predict(auth.userId, id, body.message) };
    },
  }),
];
