import { describe, expect, it } from "vitest";
import { resultWarnings, warningsWithFacts, type WarningInputs } from "../../src/experiments/warnings.js";
import { catalog, flatten, placeholders, REPORT_LANGUAGES, translator } from "../../src/reports/i18n.js";
import { cardWords } from "../../src/reports/model-card/format.js";
import { renderModelCardPage } from "../../src/reports/model-card/page.js";
import type { MonitoringResults } from "../../src/reports/model-card/section-monitoring.js";
import { warningWords } from "../../src/reports/model-card/warning-words.js";
import { emptyReport, HOSTILE, imageCard, servedReport, tableCard } from "../fixtures/model-card/cards.js";

// The model card page (report.html, issue 53 item 2 and issue 49 item 7): its two catalogs in step, every value a
// user wrote escaped by the template engine, and a Spanish card with no English sentence of the English catalog.

const en = flatten(catalog("en", "model-card"));
const es = flatten(catalog("es", "model-card"));

/** The page's text as a reader sees it: tags dropped, the five entities React writes decoded. */
function pageText(html: string): string {
  const body = html.slice(html.indexOf("<body>"));
  return body
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}

const SERVED: MonitoringResults = { state: "ok", report: servedReport() };
const EMPTY: MonitoringResults = { state: "ok", report: emptyReport() };
const render = (lang: "en" | "es", card = tableCard(), monitoring: MonitoringResults = SERVED) =>
  renderModelCardPage({ card, lang, monitoring, retentionDays: 190 });

/** Every variant the tests render: both card kinds, every monitoring state. */
const variants = (lang: "en" | "es") => [
  render(lang),
  render(lang, tableCard(), EMPTY),
  render(lang, imageCard(), { state: "unavailable" }),
  render(lang, imageCard(), EMPTY),
];

describe("the approval on the model card (issue 50 item 4)", () => {
  it("says who approved the version, when and for what, escaped, in English and Spanish", () => {
    expect(pageText(render("en"))).toContain(`Approved by cy@example.org on 2026-11-29 (version 2) for: Approved <b>use</b> & "triage"`);
    expect(render("en")).not.toContain("<b>use</b>");
    expect(pageText(render("es"))).toContain("Aprobado por cy@example.org el 2026-11-29 (versión 2) para:");
  });
  it("says a former member when the approver was erased", () => {
    const card = tableCard();
    card.approval = { ...card.approval!, approved_by: null, former_member: true };
    expect(pageText(render("en", card))).toContain("Approved by a former member on 2026-11-29");
    expect(pageText(render("es", card))).toContain("Aprobado por un antiguo miembro");
  });
  it("says Not approved where the workspace asks for it, and nothing where it does not", () => {
    expect(pageText(render("en", imageCard(), EMPTY))).toContain("Not approved. This workspace asks for a second pair of eyes");
    expect(pageText(render("es", imageCard(), EMPTY))).toContain("No aprobado.");
    const none = { ...tableCard(), approval: null };
    expect(pageText(render("en", none))).not.toMatch(/Approved by|Not approved/);
  });
});

describe("model card catalogs", () => {
  it("have the same keys in Spanish and English, and the same placeholders in each message", () => {
    expect([...es.keys()].sort()).toEqual([...en.keys()].sort());
    const mismatched = [...en].filter(([k, v]) => placeholders(v).sort().join() !== placeholders(es.get(k)!).sort().join());
    expect(mismatched).toEqual([]);
    for (const [k, v] of [...en, ...es]) expect(v.trim(), k).not.toBe("");
  });

  it("fail loudly on a missing key or an unfilled placeholder (a page never prints either)", () => {
    const t = translator("es", "model-card");
    expect(() => t.t("page.nope")).toThrow(/no message "page.nope"/);
    expect(() => t.t("page.title")).toThrow(/no value for \{\{title\}\}/);
    expect(t.t("page.title", { title: "X" })).toBe("Ficha del modelo: X");
  });

  it("choose plurals by Intl.PluralRules and write the count the reader's way", () => {
    const w = cardWords("es");
    expect(w.t("monitoring.predictions", { count: 1, p50: 1, p95: 2 })).toMatch(/^1 predicción;/);
    expect(w.t("monitoring.predictions", { count: 12345, p50: 1, p95: 2 })).toMatch(/^12\.345 predicciones;/);
    expect(cardWords("en").t("monitoring.predictions", { count: 12345, p50: 1, p95: 2 })).toMatch(/^12,345 predictions;/);
    expect(w.num(0.9123)).toBe("0,912");
    expect(cardWords("en").num(0.9123)).toBe("0.912");
  });
});

describe("model card page", () => {
  it.each(REPORT_LANGUAGES)("escapes a planted <script> in the experiment name, class name, column name and intended use (%s)", (lang) => {
    for (const html of variants(lang)) {
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toMatch(/<img|<svg/i);
    }
    const html = render(lang);
    expect(html).toContain("&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;"); // experiment name
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;"); // class name
    expect(html).toContain("&lt;script&gt;alert(&#x27;col&#x27;)&lt;/script&gt;"); // column name
    expect(html).toContain(
      "Second reader for breast masses.<br/>&lt;/div&gt;&lt;script&gt;alert(&#x27;use&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;",
    );
    // And the reader sees them as the text that was typed.
    const text = pageText(html);
    for (const typed of [HOSTILE.name, HOSTILE.className, HOSTILE.column, HOSTILE.description]) expect(text).toContain(typed);
  });

  it("is one self-contained page in the asked language: lang attribute, title, no script, no external fetch", () => {
    const es = render("es");
    expect(es.startsWith('<!doctype html>\n<html lang="es">')).toBe(true);
    expect(es).toContain(`<title>Ficha del modelo: &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;</title>`);
    expect(render("en")).toContain('<html lang="en">');
    expect(render("es", imageCard())).toContain("<h1>Ficha del modelo: Experimento n.º 7</h1>");
    expect(render("en", imageCard())).toContain("<h1>Model card: Experiment #7</h1>");
    for (const html of [...variants("en"), ...variants("es")]) expect(html).not.toMatch(/<[a-z][^>]*\s(src|href)=/i);
  });

  it("the Spanish card contains no English sentence of the English catalog", () => {
    // Each English message cut at its placeholders; pieces of three words or more are sentences a reader would see.
    const english = [...en.values()]
      .flatMap((m) => m.replace(/<\/?b>/g, "").split(/\{\{\w+\}\}/))
      .map((s) =>
        s
          .trim()
          .replace(/^[,.;:()]+|[,.;:()]+$/g, "")
          .trim(),
      )
      .filter((s) => s.split(/\s+/).length >= 3);
    expect(english.length).toBeGreaterThan(150);
    for (const html of variants("es")) {
      const text = pageText(html);
      expect(english.filter((s) => text.includes(s))).toEqual([]);
    }
    // The check can fail: the English card holds many of them.
    expect(english.filter((s) => pageText(render("en")).includes(s)).length).toBeGreaterThan(40);
  });

  it("the Spanish card uses the clinical terms and marks the training pipeline's own English as English", () => {
    const text = pageText(render("es"));
    for (const term of [
      "Sensibilidad",
      "Especificidad",
      "VPP (valor predictivo positivo)",
      "VPN (valor predictivo negativo)",
      "intervalo de confianza del 95 %",
      "Uso previsto",
      "Punto de corte",
    ])
      expect(text).toContain(term);
    expect(render("es")).toContain('<span lang="en">highest mean cross-validated AUC among 20 candidates</span>');
  });

  it("Monitoring: what is watched and the thresholds always; the results, or plainly that nothing was served", () => {
    const served = pageText(render("en"));
    expect(served).toContain("10. Monitoring after deployment"); // after section 9, the Retrospective study
    expect(served).toContain("for each of 3 input columns and the model's score, against a baseline of 3,705 validation and test patients");
    expect(served).toContain("drift when p < 0.05");
    expect(served).toContain("further from the training data than 99.5% of the validation patients did");
    expect(served).toContain("2,000 predictions;");
    expect(served).toContain("Drift overall: drift found.");
    expect(served).toContain("True outcomes received: 1,200 of 2,000 predictions (60%).");
    expect(served).toMatch(/Sensitivity 0\.800 \(0\.760 – 0\.840\) 0\.840 \(0\.790 – 0\.880\)/);
    expect(served).toContain("Estimated for the 800 predictions without an outcome");

    const none = pageText(render("es", tableCard(), EMPTY));
    expect(none).toContain(
      "Todavía no se ha hecho ninguna predicción: este modelo no ha respondido a ninguna solicitud en los últimos 190 días",
    );
    expect(none).not.toContain("Deriva en conjunto");
    expect(none).toContain("Umbrales");

    const old = pageText(render("en", imageCard(), { state: "unavailable" }));
    expect(old).toContain("9. Monitoring after deployment");
    expect(old).toContain("Drift: not watched for this model.");
    expect(old).toContain("Unfamiliar inputs: not checked for this model");
    expect(old).toContain("The monitoring figures could not be read when this card was made");
  });

  it("words every warning in English exactly as the API does, from the same facts", () => {
    const iv = (value: number, lo = value, hi = value) => ({ value, ci_low: lo, ci_high: hi });
    const inputs: WarningInputs[] = [
      {
        problem: "binary",
        test: { auc: iv(0.55, 0.41, 0.69), ece: iv(0.17) },
        clinical: { test_patients_per_class: { B: 40, M: 1 } } as never,
        internalSplit: {},
      },
      {
        problem: "binary",
        metric: "auc",
        test: { auc: iv(0.9995), sensitivity: iv(1, 1, 1), specificity: iv(0.5, 0.2, 0.8) },
        validation: { auc: iv(0.99) },
        internalSplit: { retrospectiveStudies: 2 },
      },
      {
        problem: "binary",
        metric: "auc",
        test: { auc: iv(0.7, 0.6, 0.8) },
        validation: { auc: iv(0.95) },
        classCounts: { a: 950, b: 50 },
        internalSplit: { retrospectiveStudies: 1 },
      },
      { problem: "regression", metric: "rmse", test: { rmse: iv(3, 2, 4) }, validation: { rmse: iv(1) }, testPatients: 12 },
      {
        problem: "binary",
        test: { auc: iv(0.9, 0.85, 0.95) },
        clinical: {
          test_patients_per_class: { B: 100, M: 100 },
          strongest_feature: { name: "code", auc: 0.995 },
          subgroups: [
            { column: "site", kind: "categorical", groups: [{ label: "C", flag: "worse", auc: iv(0.6, 0.5, 0.7), rest_auc: 0.92 }] },
          ],
        } as never,
      },
    ];
    const w = cardWords("en");
    let seen = 0;
    for (const x of inputs) {
      const api = resultWarnings(x);
      const withFacts = warningsWithFacts(x);
      expect(api.map((a) => a.code)).toEqual(withFacts.map((a) => a.code));
      for (const [i, warning] of withFacts.entries()) {
        expect(warningWords(warning.code, warning.facts!, w), warning.code).toBe(api[i].message);
        expect(warningWords(warning.code, warning.facts!, cardWords("es")), warning.code).not.toBe(api[i].message);
        seen++;
      }
    }
    const codes = new Set(inputs.flatMap((x) => resultWarnings(x).map((a) => a.code)));
    expect([...codes].sort()).toEqual([
      "class_imbalance",
      "internal_test_only",
      "no_better_than_chance",
      "overfitting",
      "perfect_score_check_leakage",
      "poor_calibration",
      "subgroup_worse",
      "test_set_too_small",
    ]);
    expect(seen).toBeGreaterThan(8);
  });
});
