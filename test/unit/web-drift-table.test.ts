import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { MonitoringReport } from "../../web/src/api/types";
// The dashboard's strings (English: no browser language here), as main.tsx loads them.
import "../../web/src/i18n";
import { DriftTable } from "../../web/src/components/monitoring/DriftTable";

// The drift table names image descriptors and a detection model's box series in words. Their names hold a colon
// (img:width, det:boxes), which i18next reads as a namespace unless told not to: the table showed "img:width".

const row = (feature: string, kind: "column" | "descriptor" | "features" | "score") => ({
  feature,
  kind,
  type: "numeric" as const,
  n: 100,
  baseline_n: 200,
  test: "ks" as const,
  statistic: 0.1,
  p_value: 0.5,
  psi: 0.01,
  drifted: false,
  severity: "none" as const,
});

describe("drift table", () => {
  it("says what each descriptor and detection series is, and marks only the image descriptors as of the image", () => {
    const drift = {
      status: "stable",
      severity: "none",
      reason: null,
      baseline_n: 200,
      baseline_source: "validation and test patients",
      features: [
        row("det:boxes", "descriptor"),
        row("det:size", "descriptor"),
        row("img:width", "descriptor"),
        row("img:feature:3", "features"),
        row("Glucose", "column"),
      ],
    } as unknown as MonitoringReport["drift"];
    const html = renderToStaticMarkup(createElement(DriftTable, { drift }));
    expect(html).toContain(">boxes per image<");
    expect(html).toContain(">box size (share of the image)<");
    expect(html).toContain(">width<");
    expect(html).toContain(">image features (component 3)<"); // the network's own view of the image, in words
    expect(html).not.toMatch(/>(det|img):/);
    expect(html.match(/\(image\)/g)).toHaveLength(1);
    expect(html).toContain(">Glucose<");
  });
});
