import { renderToStaticMarkup } from "react-dom/server";
import type { CardFigure, ModelCard } from "../../experiments/model-card.js";
import type { ReportLanguage } from "../i18n.js";
import { cardWords, type CardWords } from "./format.js";
import { MonitoringSection, type MonitoringResults } from "./section-monitoring.js";
import { DataSource, IntendedUse, ModelSection, PreprocessingSection, Split, type SectionProps } from "./sections-data.js";
import { Calibration, ConfusionMatrix, FigureTable, Performance, Subgroups } from "./sections-performance.js";
import { CARD_CSS } from "./styles.js";
import { WarningText } from "./warning-text.js";

// report.html: the model card as one printable page, rendered by React on the server (renderToStaticMarkup), so
// every value a user or a dataset wrote is escaped by the engine, never by hand. Self-contained (inline CSS, no
// script, no image fetched): a team can save it, print it to PDF or attach it to a submission. Its words come from
// locales/<lang>/model-card.json (the one catalog), in Spanish or English.

const shortLabel = (f: CardFigure, w: CardWords) => {
  if (w.has(`figure.${f.name}_short`)) return w.t(`figure.${f.name}_short`);
  const label = w.has(`figure.${f.name}`) ? w.t(`figure.${f.name}`) : f.label;
  return label.includes(" (") ? label.slice(0, label.indexOf(" (")) : label;
};

/** Three lines a reviewer reads first: the headline figures for the positive class and every warning by its title. */
function AtAGlance({ card, w }: SectionProps) {
  const pos = card.performance.positive_class?.name ?? w.t("glance.thePositiveClass");
  const shown = ["auc", "sensitivity", "specificity", "rmse", "map50"]
    .map((name) => card.performance.test.find((f) => f.name === name))
    .filter((f): f is CardFigure => Boolean(f))
    .map((f) => {
      const name = f.name === "sensitivity" || f.name === "specificity" ? w.t(`glance.${f.name}For`, { class: pos }) : shortLabel(f, w);
      return `${name} ${w.num(f.value)} (${w.num(f.ci_low)} – ${w.num(f.ci_high)})`;
    });
  const title = (code: string) => (w.has(`warnings.title.${code}`) ? w.t(`warnings.title.${code}`) : code);
  const severe = card.warnings.filter((x) => x.severity === "severe").map((x) => title(x.code));
  const others = card.warnings.filter((x) => x.severity !== "severe").map((x) => title(x.code));
  const list = [
    severe.length ? w.t("glance.serious", { titles: severe.join(", ") }) : "",
    others.length ? (severe.length ? w.t("glance.also", { titles: others.join(", ") }) : others.join(", ")) : "",
  ]
    .filter(Boolean)
    .join("; ");
  return (
    <section className="glance" aria-label={w.t("glance.label")}>
      <p>
        <b>{w.t("glance.figures")}</b> {shown.join("; ") || "–"}.
      </p>
      <p>
        <b>{w.t("glance.warnings")}</b> {card.warnings.length ? w.t("glance.section", { list }) : w.t("glance.none")}
        {card.retrospective.length ? (
          <>
            {" "}
            <b>{w.t("glance.retrospective")}</b> {w.t("glance.retrospectiveCount", { count: card.retrospective.length })}
          </>
        ) : null}
      </p>
    </section>
  );
}

function Warnings({ card, w }: SectionProps) {
  return (
    <>
      <h2>{w.t("warnings.heading", { n: 8 })}</h2>
      {card.warnings.length ? (
        card.warnings.map((x) => (
          <div className={x.severity === "severe" ? "warn severe" : "warn"} key={x.code}>
            <b>
              {w.t(`warnings.${x.severity}`)}: {w.has(`warnings.title.${x.code}`) ? w.t(`warnings.title.${x.code}`) : x.title}
            </b>
            <WarningText warning={x} facts={card.warning_facts[x.code]} w={w} />
          </div>
        ))
      ) : (
        <p>{w.t("warnings.none")}</p>
      )}
      <ul>
        {card.limitation_codes.map((c) => (
          <li key={c}>{w.t(`limitation.${c}`)}</li>
        ))}
      </ul>
    </>
  );
}

function Retrospective({ card, w }: SectionProps) {
  return (
    <>
      <h2>{w.t("retro.heading", { n: 9 })}</h2>
      {card.retrospective.map((r) => (
        <div key={r.experiment_id}>
          <h3>
            {r.name
              ? w.t("retro.experimentNamed", { id: r.experiment_id, name: r.name })
              : w.t("retro.experiment", { id: r.experiment_id })}
          </h3>
          <p className="muted">
            {w.t("retro.meta", { file: r.file_name ?? "–", date: w.date(r.finished_at), patients: w.count(r.patients) })}
          </p>
          <FigureTable rows={r.test} w={w} />
          <ConfusionMatrix cm={r.confusion_matrix} w={w} />
        </div>
      ))}
    </>
  );
}

export interface CardPageInput {
  card: ModelCard;
  lang: ReportLanguage;
  monitoring: MonitoringResults;
  retentionDays: number;
}

function ModelCardPage({ card, lang, monitoring, retentionDays }: CardPageInput) {
  const w = cardWords(lang);
  // An unnamed experiment's title is the JSON card's English "Experiment #N": the page says it in its own language.
  const named = card.title !== `Experiment #${card.experiment_id}`;
  const title = w.t("page.title", { title: named ? card.title : w.t("page.untitled", { id: card.experiment_id }) });
  return (
    <html lang={lang}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        {/* A constant of this file, not user text: the one markup the engine does not escape (CSS quotes must stay quotes). */}
        <style dangerouslySetInnerHTML={{ __html: CARD_CSS }} />
      </head>
      <body>
        <header>
          <h1>{title}</h1>
          <p className="meta">
            {w.t("page.meta", {
              id: card.experiment_id,
              version: card.model_version,
              date: w.date(card.generated_at),
              guideline: w.t("page.guideline"),
            })}
          </p>
        </header>
        <AtAGlance card={card} w={w} />
        <main>
          <IntendedUse card={card} w={w} />
          <DataSource card={card} w={w} />
          <Split card={card} w={w} />
          <PreprocessingSection card={card} w={w} />
          <ModelSection card={card} w={w} />
          <Performance card={card} w={w} n={6} />
          {card.subgroups ? <Subgroups columns={card.subgroups} w={w} /> : null}
          <Calibration card={card} w={w} n={7} />
          <Warnings card={card} w={w} />
          {card.retrospective.length ? <Retrospective card={card} w={w} /> : null}
          <MonitoringSection card={card} w={w} n={card.retrospective.length ? 10 : 9} results={monitoring} retentionDays={retentionDays} />
        </main>
        <footer>{w.t("page.footer")}</footer>
      </body>
    </html>
  );
}

/** The whole page, doctype included. */
export function renderModelCardPage(input: CardPageInput): string {
  return `<!doctype html>\n${renderToStaticMarkup(<ModelCardPage {...input} />)}`;
}
