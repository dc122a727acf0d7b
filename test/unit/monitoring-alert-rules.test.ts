import { describe, expect, it } from "vitest";
import { ALERT_RULES, DEFAULT_ALERT_RULES, holdingRules, judgeRules, mergeRules, type Traffic } from "../../src/monitoring/alert-rules.js";
import { alertSummary, ruleTitle, severityWord } from "../../src/monitoring/alert-text.js";
import type { MonitoringReport } from "../../src/monitoring/report.js";
import { formatMessage } from "../../src/net/smtp.js";

// The alert rules' judgement (src/monitoring/alert-rules.ts) on hand-made reports: each rule fires on its figure and
// only past its threshold and minimum sample; stored overrides merge over the defaults.

const iv = (value: number | null, lo: number | null = null, hi: number | null = null) => ({ value, ci_low: lo, ci_high: hi });

function report(over: Partial<Record<string, unknown>> = {}): MonitoringReport {
  const base = {
    predictions: 500,
    latency_ms: { mean: 5, p50_at_most: 5, p95_at_most: 10 },
    drift: { status: "stable", severity: "none", features: [], baseline_n: 1000, baseline_source: "x", reason: null },
    unfamiliar_inputs: { checked: 500, unfamiliar: 5, unchecked: 0, rate: 0.01 },
    performance: {
      realized: {
        n: 0,
        positives: 0,
        sensitivity: iv(null),
        specificity: iv(null),
        ppv: iv(null),
        npv: iv(null),
        auc: iv(null),
        accuracy: iv(null),
      },
      estimated: {},
      model_card: { source: "test", sensitivity: iv(0.8, 0.7, 0.9) },
    },
  };
  return { ...base, ...over } as unknown as MonitoringReport;
}
const busy: Traffic = { quiet: 10, before: 700 };

describe("alert rules", () => {
  it("fires nothing on a healthy report", () => {
    expect(judgeRules(DEFAULT_ALERT_RULES, report(), busy)).toEqual([]);
  });

  it("drift: medium or high by default, only high when asked", () => {
    const drift = {
      status: "drift",
      severity: "medium",
      features: [{ feature: "Glucose", severity: "medium", test: "psi", statistic: 0.2, psi: 0.2, n: 900 }],
    };
    const f = judgeRules(DEFAULT_ALERT_RULES, report({ drift }), busy);
    expect(f).toEqual([expect.objectContaining({ rule: "drift", severity: "warning" })]);
    expect((f[0].details.features as any[])[0].feature).toBe("Glucose");
    expect(judgeRules(mergeRules({ drift: { min_severity: "high" } }), report({ drift }), busy)).toEqual([]);
    expect(judgeRules(mergeRules({ drift: { enabled: false } }), report({ drift }), busy)).toEqual([]);
  });

  it("holding: a rule is holding only when judged on enough data and not broken (silence is not recovery)", () => {
    // Healthy and busy: every rule but the sensitivity one (no outcomes came back) holds.
    expect(holdingRules(DEFAULT_ALERT_RULES, report(), busy)).toEqual(["drift", "unfamiliar_inputs", "predictions_stopped", "latency"]);
    const empty = report({
      predictions: 0,
      drift: { status: "not_enough_data", severity: "not_enough_data", features: [] },
      unfamiliar_inputs: { checked: 0, unfamiliar: 0, unchecked: 0, rate: null },
    });
    expect(holdingRules(DEFAULT_ALERT_RULES, empty, { quiet: 0, before: 0 })).toEqual([]);
    const drift = { status: "drift", severity: "medium", features: [{ feature: "Glucose", severity: "medium", test: "psi", n: 900 }] };
    expect(holdingRules(DEFAULT_ALERT_RULES, report({ drift }), busy)).not.toContain("drift");
    expect(holdingRules(mergeRules({ drift: { min_severity: "high" } }), report({ drift }), busy)).toContain("drift");
    expect(holdingRules(mergeRules({ latency: { enabled: false } }), report(), busy)).not.toContain("latency");
    // The sensitivity rule holds once enough positives came back and the interval reaches the card's figure.
    const realized = { ...report().performance.realized, positives: 30, sensitivity: iv(0.78, 0.65, 0.88) };
    const withOutcomes = report({ performance: { ...report().performance, realized } });
    expect(holdingRules(DEFAULT_ALERT_RULES, withOutcomes, busy)).toContain("sensitivity_below_card");
  });

  it("unfamiliar inputs: above the rate, with enough checked", () => {
    const high = { checked: 100, unfamiliar: 10, unchecked: 0, rate: 0.1 };
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ unfamiliar_inputs: high }), busy).map((x) => x.rule)).toEqual(["unfamiliar_inputs"]);
    const few = { checked: 20, unfamiliar: 10, unchecked: 0, rate: 0.5 };
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ unfamiliar_inputs: few }), busy)).toEqual([]);
  });

  it("sensitivity: only when the whole interval is below the model card's figure, with enough positives", () => {
    const perf = (hi: number, positives: number) => ({
      ...report().performance,
      realized: { ...report().performance.realized, positives, sensitivity: iv(0.6, 0.5, hi) },
    });
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ performance: perf(0.75, 40) }), busy).map((x) => x.rule)).toEqual([
      "sensitivity_below_card",
    ]);
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ performance: perf(0.85, 40) }), busy)).toEqual([]); // the card's 0.8 is inside
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ performance: perf(0.75, 10) }), busy)).toEqual([]); // too few positives
  });

  it("predictions stopped: none lately after regular traffic, not for a model that was never busy", () => {
    expect(judgeRules(DEFAULT_ALERT_RULES, report(), { quiet: 0, before: 700 }).map((x) => x.rule)).toEqual(["predictions_stopped"]);
    expect(judgeRules(DEFAULT_ALERT_RULES, report(), { quiet: 0, before: 50 })).toEqual([]);
  });

  it("latency: the 95th percentile's bin edge above the threshold; past the last bin counts as slow", () => {
    const slow = { mean: 900, p50_at_most: 500, p95_at_most: 5000 };
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ latency_ms: slow }), busy)).toEqual([
      expect.objectContaining({ rule: "latency", severity: "warning" }),
    ]);
    const offTheScale = { mean: 9000, p50_at_most: null, p95_at_most: null };
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ latency_ms: offTheScale }), busy)[0]).toMatchObject({
      rule: "latency",
      severity: "critical",
    });
    expect(judgeRules(DEFAULT_ALERT_RULES, report({ latency_ms: slow, predictions: 10 }), busy)).toEqual([]);
  });

  it("merges stored overrides over the defaults and ignores a stored value that no longer fits", () => {
    expect(mergeRules({ latency: { p95_ms: 1500 } }).latency).toEqual({ enabled: true, p95_ms: 1500, min_predictions: 50 });
    expect(mergeRules({ latency: { p95_ms: -1 } })).toEqual(DEFAULT_ALERT_RULES);
    expect(mergeRules(null)).toEqual(DEFAULT_ALERT_RULES);
  });

  it("says each alert in Spanish and English without a patient's value", () => {
    const a = {
      rule: "sensitivity_below_card",
      experimentId: 3,
      details: { realized: iv(0.6, 0.5, 0.7), model_card: iv(0.8), positives: 40 },
    };
    expect(alertSummary(a, "en")).toBe(
      "Model 3: the sensitivity seen on true outcomes is 60.0 % (95 % CI 50.0 %–70.0 %), below the model card's 80.0 %. The model may be missing positive cases.",
    );
    expect(alertSummary(a, "es")).toContain("Modelo 3: la sensibilidad observada");
  });

  it("a drift alert reads in Spanish without English words: the score and the severities are said in Spanish", () => {
    const details = {
      features: [
        { feature: "Glucose", severity: "high" },
        { feature: "score", severity: "medium" },
      ],
    };
    const a = { rule: "drift", details, experimentId: 1 };
    expect(alertSummary(a, "es")).toContain("en Glucose (alta), la puntuación (media).");
    expect(alertSummary(a, "en")).toContain("in Glucose (high), score (medium).");
  });

  it("words every rule from the catalog in both languages: each rule has its own sentence, no key or {{value}} shows", () => {
    const rules = [...ALERT_RULES];
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules)
      for (const lang of ["en", "es"] as const) {
        const text = alertSummary({ rule, details: {}, experimentId: 5 }, lang);
        expect(text, `${rule} ${lang}`).toMatch(lang === "es" ? /^Modelo 5: / : /^Model 5: /);
        expect(text, `${rule} ${lang}`).not.toMatch(/alertText|\{\{/);
        // Not the fallback "<model>: <rule code>": the rule has a sentence of its own.
        expect(text, `${rule} ${lang}`).not.toContain(rule);
        expect(ruleTitle(rule, lang), `${rule} ${lang}`).not.toBe(rule);
      }
    expect(alertSummary({ rule: "latency", details: { p95_ms_threshold: 300 }, experimentId: 5 }, "es")).toBe(
      "Modelo 5: el 95 % de las respuestas tarda hasta más de 5 s, por encima del límite de 300 ms.",
    );
    expect(severityWord("critical", "es")).toBe("crítica");
  });
});

describe("alert e-mail format", () => {
  it("keeps headers on one line, encodes a non-ASCII subject and base64s the body", () => {
    const text = formatMessage(
      "builder@h.example",
      { to: ["a@h.example"], subject: "Alerta: deriva\r\nBcc: evil@x.example", text: "Sí.\n.una línea con punto" },
      new Date(0),
    );
    const [head, body] = text.split("\r\n\r\n");
    expect(head).not.toMatch(/^Bcc:/m);
    expect(head).toMatch(/^Subject: Alerta: deriva Bcc: evil@x.example$/m);
    expect(Buffer.from(body.replace(/\r\n/g, ""), "base64").toString("utf8")).toBe("Sí.\n.una línea con punto");
    const accented = formatMessage("b@h.example", { to: ["a@h.example"], subject: "Alerta de monitorización", text: "x" });
    expect(accented).toMatch(/^Subject: =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/m);
  });
});
