import type { ModelCard } from "../../experiments/model-card.js";
import type { CardWords } from "./format.js";
import { Paragraphs } from "./Rich.js";

// Sections 1 to 5 of the card: intended use, data, split, preprocessing, model. Every value a user or a dataset
// wrote (names, intended use, file, column and class names) is a React text child or attribute: escaped by React.

export interface SectionProps {
  card: ModelCard;
  w: CardWords;
}

/** Text the training pipeline wrote in English (its selection reason): marked as such, never passed off as translated. */
export function PipelineText({ w, text }: { w: CardWords; text: string }) {
  if (w.lang === "en") return <>{text}</>;
  return (
    <>
      <span className="muted">{w.t("model.pipelineWords")}</span> <span lang="en">{text}</span>
    </>
  );
}

export function IntendedUse({ card, w }: SectionProps) {
  return (
    <>
      <h2>{w.t("intended.heading", { n: 1 })}</h2>
      {card.intended_use.text ? (
        <div className="intended">
          <Paragraphs text={card.intended_use.text} />
        </div>
      ) : (
        <p className="muted">{w.t("intended.missing")}</p>
      )}
      <Approval card={card} w={w} />
      {card.description ? (
        <p>
          <b>{w.t("intended.notes")}</b> <Paragraphs text={card.description} />
        </p>
      ) : null}
    </>
  );
}

/** "Approved by X on DATE for: ..." or "Not approved" where the workspace asks for approval (issue 50 item 4). */
function Approval({ card, w }: SectionProps) {
  const a = card.approval;
  if (!a) return null;
  if (!a.approved)
    return (
      <p className="approval">
        <b>{w.t("intended.notApproved")}</b> {w.t("intended.notApprovedWhy", { version: card.model_version })}
      </p>
    );
  const who = a.approved_by ?? w.t("intended.formerMember");
  return (
    <p className="approval">
      <b>{w.t("intended.approved", { who, date: w.date(a.approved_at), version: card.model_version })}</b> {a.intended_use}
    </p>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{children}</td>
    </tr>
  );
}

export function DataSource({ card, w }: SectionProps) {
  const d = card.data;
  return (
    <>
      <h2>{w.t("data.heading", { n: 2 })}</h2>
      <table>
        <tbody>
          <Row label={w.t("data.file")}>{d.file_name ?? "–"}</Row>
          <Row label={w.t("data.submitted")}>{w.date(d.submitted_at)}</Row>
          <Row label={w.t("data.inputs")}>{d.inputs === "images" ? w.t("data.inputsImages") : w.t("data.inputsTable")}</Row>
          <Row label={w.t("data.outcome")}>{d.label_columns.join(", ")}</Row>
          <Row label={w.t("data.rows")}>{w.count(d.rows)}</Row>
          <Row label={w.t("data.patients")}>{w.count(d.patients)}</Row>
          {d.images !== null ? <Row label={w.t("data.images")}>{w.count(d.images)}</Row> : null}
          {Object.entries(d.class_counts ?? {}).map(([column, values]) => (
            <Row key={column} label={w.t("data.classesIn", { column })}>
              {Object.entries(values)
                .map(([k, n]) => `${k}: ${w.count(n)}`)
                .join("; ")}
            </Row>
          ))}
          <Row label={w.t("data.fingerprint")}>
            <code>{d.dataset_sha256 ?? "–"}</code>
          </Row>
        </tbody>
      </table>
    </>
  );
}

function splitMethod(card: ModelCard, w: CardWords): string {
  const how = card.split.how;
  if (how.kind === "retrospective") return w.t("split.retrospective", { source: how.source_experiment_id });
  if (how.kind === "column") return w.t("split.byColumn", { column: how.column });
  return w.t("split.byPatient", { unit: w.t(how.unit === "images" ? "split.unitImages" : "split.unitRows"), seed: how.seed });
}

export function Split({ card, w }: SectionProps) {
  const s = card.split;
  const method = splitMethod(card, w);
  const part = (key: string, patients: number | undefined, rows: number) => (
    <tr>
      <th scope="row">{w.t(key)}</th>
      <td className="n">{w.count(patients)}</td>
      <td className="n">{w.count(rows)}</td>
    </tr>
  );
  return (
    <>
      <h2>{w.t("split.heading", { n: 3 })}</h2>
      <p>{s.internal ? w.t("split.internal", { method }) : w.t("split.notSplit", { method })}</p>
      <table>
        <thead>
          <tr>
            <th scope="col">{w.t("split.part")}</th>
            <th scope="col" className="n">
              {w.t("data.patients")}
            </th>
            <th scope="col" className="n">
              {w.t("data.rows")}
            </th>
          </tr>
        </thead>
        <tbody>
          {part("split.train", s.patients?.train, s.rows.train)}
          {part("split.validation", s.patients?.validation, s.rows.validation)}
          {part("split.test", s.patients?.test, s.rows.test)}
        </tbody>
      </table>
    </>
  );
}

/** 0.00392156862745098 reads as 1/255 (8-bit pixels to 0-1). */
const scaleWords = (scale: number, w: CardWords) =>
  Math.abs(scale * 255 - 1) < 1e-9 ? "1/255" : Math.abs(scale * 65535 - 1) < 1e-12 ? "1/65535" : w.num(scale, 6);

type Preprocessing = {
  images?: {
    width: number;
    height: number;
    channels: number;
    resize: string;
    interpolation: string;
    scale: number;
    mean: number[];
    std: number[];
  };
  columns?: Array<{ name: string; type: string; missing_allowed?: boolean }>;
};

function preprocessingWords(pre: Preprocessing, w: CardWords): string {
  const list = (xs: number[]) => xs.map((x) => w.plain(x)).join(w.lang === "es" ? "; " : ", ");
  const im = pre.images;
  if (im) {
    return w.t("prep.image", {
      width: im.width,
      height: im.height,
      resize: w.t(im.resize === "letterbox" ? "prep.letterbox" : "prep.stretch"),
      interpolation: im.interpolation,
      channels: w.t(im.channels === 1 ? "prep.grey" : "prep.rgb"),
      scale: scaleWords(im.scale, w),
      mean: list(im.mean),
      std: list(im.std),
    });
  }
  const columns = pre.columns ?? [];
  const numeric = columns.filter((c) => c.type === "numeric");
  const missing = numeric.filter((c) => c.missing_allowed).length;
  return (
    w.t("prep.table", { columns: columns.length, numeric: numeric.length, categorical: columns.length - numeric.length }) +
    (missing ? w.t("prep.missing", { count: missing }) : w.t("prep.noMissing"))
  );
}

export function PreprocessingSection({ card, w }: SectionProps) {
  const pre = card.preprocessing as Preprocessing;
  return (
    <>
      <h2>{w.t("prep.heading", { n: 4 })}</h2>
      <p>{preprocessingWords(pre, w)}</p>
      {pre.columns?.length ? (
        <p>
          <b>{w.t("prep.inputColumns")}</b>{" "}
          {pre.columns.map((c, i) => (
            <span key={i}>
              {i ? ", " : ""}
              {c.name} <span className="muted">({w.has(`prep.${c.type}`) ? w.t(`prep.${c.type}`) : c.type})</span>
            </span>
          ))}
        </p>
      ) : null}
    </>
  );
}

export function ModelSection({ card, w }: SectionProps) {
  const m = card.model;
  const problem = w.has(`model.problem.${m.problem}`) ? w.t(`model.problem.${m.problem}`) : m.problem;
  const cv = m.cross_validation;
  const validation = cv
    ? cv.repeats > 1
      ? w.t("model.crossValidationRepeated", { folds: cv.folds, repeats: cv.repeats })
      : w.t("model.crossValidation", { folds: cv.folds })
    : m.validation;
  const figure = (name: string) => (w.has(`figure.${name}`) ? w.t(`figure.${name}`) : name);
  return (
    <>
      <h2>{w.t("model.heading", { n: 5 })}</h2>
      <table>
        <tbody>
          <Row label={w.t("model.model")}>{m.family ?? m.kind}</Row>
          <Row label={w.t("model.task")}>
            {problem} ({m.classes.join(", ")})
          </Row>
          {m.kind === "vision_classification" ? (
            <Row label={w.t("model.backbone")}>
              {m.backbone ? (
                <>
                  {m.backbone.name}{" "}
                  <span className="muted">
                    (
                    {w.t("model.backboneDetails", {
                      sha256: m.backbone.sha256 ?? "–",
                      licence: m.backbone.licence ?? w.t("model.notStated"),
                      source: m.backbone.source ?? w.t("model.notStated"),
                    })}
                    )
                  </span>
                </>
              ) : (
                w.t("model.backboneNone")
              )}
            </Row>
          ) : null}
          <Row label={w.t("model.why")}>{m.selection_reason ? <PipelineText w={w} text={m.selection_reason} /> : "–"}</Row>
          {m.selection_rule ? (
            <Row label={w.t("model.rule")}>
              <PipelineText w={w} text={m.selection_rule} />
            </Row>
          ) : null}
          {validation ? <Row label={w.t("model.validation")}>{cv ? validation : <PipelineText w={w} text={validation} />}</Row> : null}
          <Row label={w.t("model.selectedOn")}>{figure(m.selection_metric)}</Row>
          <Row label={w.t("model.built")}>
            {w.t("model.builtWhen", { date: w.date(m.built_at), version: card.model_version, seconds: w.num(m.training_time_s, 0) })}
          </Row>
        </tbody>
      </table>
    </>
  );
}
