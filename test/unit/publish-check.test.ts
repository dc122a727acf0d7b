import { describe, expect, it } from "vitest";
import { checkPublishable } from "../../src/jobs/publish.js";

// Publishing promises what serving answers: every vision classifier carries Grad-CAM maps.
describe("checkPublishable", () => {
  it("refuses a vision classifier without a CAM output", () => {
    expect(() => checkPublishable({ kind: "vision_classification", outputs: { scores: "scores" } as { cam?: string } })).toThrow(
      /no Grad-CAM output/,
    );
  });
  it("accepts a vision classifier with one, and other kinds without one", () => {
    expect(() => checkPublishable({ kind: "vision_classification", outputs: { cam: "cam" } })).not.toThrow();
    expect(() => checkPublishable({ kind: "tabular", outputs: {} })).not.toThrow();
    expect(() => checkPublishable({ kind: "detection", outputs: {} })).not.toThrow();
  });
});
