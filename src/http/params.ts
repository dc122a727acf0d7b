import { z } from "zod";
import { invalid } from "../errors.js";

/** An experiment_id wherever it comes as text (path or query): the caller's own positive experiment number. */
export const experimentId = z.coerce
  .number()
  .int(invalid("detail.positive_integer"))
  .positive(invalid("detail.positive_integer"))
  .max(2_147_483_647);

/** The path parameter of every /v1/experiments/{experiment_id}/... and /v1/models/{experiment_id}/... route. */
export const experimentIdParams = z.object({ experiment_id: experimentId });
