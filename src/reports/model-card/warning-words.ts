import type { WarningFacts } from "../../experiments/warnings.js";
import type { CardWords } from "./format.js";

// A warning's explanation in the reader's language, worded from its facts (src/experiments/warnings.ts says which
// numbers and names each rule found). The API's English message is the same rule in the same words; the model card
// (warning-text.tsx) and the API's view in another language (src/experiments/view-language.ts) both say it from here.

const metric = (name: string, w: CardWords) => (w.has(`warningText.metric.${name}`) ? w.t(`warningText.metric.${name}`) : name);

function smallTestWords(f: WarningFacts, w: CardWords): string[] {
  const parts: string[] = [];
  if (f.few_per_class?.length) {
    const list = f.few_per_class
      .map((c) => w.t("warningText.smallFewItem", { count: c.patients, class: c.class }))
      .join(w.t("warningText.and"));
    parts.push(w.t("warningText.smallFew", { list }));
  }
  if (f.regression_patients !== undefined) parts.push(w.t("warningText.smallRegression", { count: f.regression_patients }));
  if (f.flat?.length) {
    const list = f.flat.map((x) => w.t("warningText.flatItem", { metric: metric(x.metric, w), value: w.num(x.value) })).join(", ");
    parts.push(w.t("warningText.smallFlat", { count: f.flat.length, list }));
  }
  return parts;
}

/** The sentences of one warning, or null when its facts are missing (a card stored before facts existed). */
export function warningWords(code: string, f: WarningFacts, w: CardWords): string | null {
  switch (code) {
    case "no_better_than_chance":
      return f.auc
        ? w.t("warningText.no_better_than_chance", { auc: w.num(f.auc.value, 2), low: w.num(f.auc.low, 2), high: w.num(f.auc.high, 2) })
        : null;
    case "perfect_score_check_leakage":
      return [
        f.perfect_auc !== undefined ? w.t("warningText.leakPerfect", { auc: w.num(f.perfect_auc) }) : "",
        f.leaking_column ? w.t("warningText.leakColumn", { column: f.leaking_column.name, auc: w.num(f.leaking_column.auc) }) : "",
        w.t("warningText.leakAdvice"),
      ]
        .filter(Boolean)
        .join(" ");
    case "test_set_too_small": {
      const parts = smallTestWords(f, w);
      return parts.length ? parts.join(" ") : null;
    }
    case "overfitting": {
      const o = f.overfit;
      if (!o) return null;
      const params = { metric: metric(o.metric, w), validation: w.num(o.validation, 2), test: w.num(o.test, 2) };
      return w.t(o.lower_is_better ? "warningText.overfitBetter" : "warningText.overfitHigher", params);
    }
    case "poor_calibration":
      return f.ece !== undefined ? w.t("warningText.poor_calibration", { points: Math.round(f.ece * 100), ece: w.num(f.ece, 2) }) : null;
    case "subgroup_worse": {
      const groups = f.worse_groups ?? [];
      if (!groups.length) return null;
      const list = groups
        .map((g) =>
          w.t("warningText.subgroupItem", {
            column: g.column,
            label: g.label,
            auc: w.num(g.auc, 2),
            low: w.num(g.low, 2),
            high: w.num(g.high, 2),
            rest: w.num(g.rest, 2),
          }),
        )
        .join("; ");
      return w.t("warningText.subgroupWorse", { count: groups.length, list });
    }
    case "class_imbalance":
      return f.rare
        ? w.t("warningText.class_imbalance", {
            share: w.pct(f.rare.rows / f.rare.total),
            rows: w.plain(f.rare.rows),
            total: w.plain(f.rare.total),
            class: f.rare.class,
          })
        : null;
    case "internal_test_only": {
      const n = f.retrospective_studies ?? 0;
      return `${w.t("warningText.internal")} ${n ? w.t("warningText.internalStudies", { count: n }) : w.t("warningText.internalAdvice")}`;
    }
    default:
      return null;
  }
}
