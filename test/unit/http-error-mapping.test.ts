import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.js";
import { errorBody, predictErrorBody, toApiError } from "../../src/http/errors.js";
import { ModelNotPublished } from "../../src/serving/errors.js";

// The edge's one mapping of domain errors (src/http/errors.ts): serving's ModelNotPublished becomes the answer
// clients have always seen, chosen by the error's data, never by its message text.

describe("toApiError maps serving's ModelNotPublished", () => {
  it.each([
    ["queued", "experiment 4 has no published model: it is queued; try again when it is ready"],
    ["running", "experiment 4 has no published model: it is running; try again when it is ready"],
    ["failed", "experiment 4 has no published model: it ended failed without a model"],
    ["cancelled", "experiment 4 has no published model: it ended cancelled without a model"],
  ])("an experiment %s: 409 model_not_ready with its state", (status, message) => {
    const e = toApiError(new ModelNotPublished(4, status));
    expect([e.status, e.code, e.message]).toEqual([409, "model_not_ready", message]);
    expect(e.details).toEqual([{ field: "experiment_id", message: `the experiment is ${status}`, status }]);
    expect(predictErrorBody(e)).toMatchObject({ error: 1, code: "model_not_ready", type: "conflict_error" });
  });

  it("without a state (the model routes): 404 not_found", () => {
    const e = toApiError(new ModelNotPublished(4));
    expect(errorBody(e)).toEqual({ error: { code: "not_found", message: "experiment 4 has no published model", type: "not_found_error" } });
  });

  it("leaves ApiErrors as they are and anything unknown a 500, whatever its message says", () => {
    const own = new ApiError(404, "not_found", "experiment 4 has no published model");
    expect(toApiError(own)).toBe(own);
    expect(toApiError(new Error("experiment 4 has no published model")).status).toBe(500);
  });
});
