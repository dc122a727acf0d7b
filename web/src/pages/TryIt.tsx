import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api } from "../api/client";
import { call } from "../api/typed";
import type { Model, Prediction } from "../api/types";
import { BatchScoring } from "../components/BatchScoring";
import { PacsTry } from "../components/PacsTry";
import { SnippetTabs } from "../components/SnippetTabs";
import { ErrorBox, Link } from "../components/ui";
import { gradcamPixels, rampGradient } from "../lib/gradcam";
import { outOfRange, parsePastedRow } from "../lib/row-input";
import { predictSnippets } from "../lib/snippets";
import { formatNumber } from "../lib/format";

/** Try a ready model with the same call a program makes (POST /v1/experiments/{id}/predict). */
export function TryItPage({ id }: { id: number }) {
  const { t } = useTranslation("tryit");
  const [model, setModel] = useState<Model | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [values, setValues] = useState<Array<number | null> | undefined>(undefined);
  const [incomplete, setIncomplete] = useState(false);

  useEffect(() => {
    call("get", "/v1/models/{experiment_id}", { path: { experiment_id: id } }).then(setModel, setError);
  }, [id]);

  if (error && !model) return <ErrorBox error={error} />;
  if (!model) return <p aria-busy="true">{t("common:loading")}</p>;
  return (
    <section>
      <h1>
        {t("try.title")} <Link to={`/experiments/${id}`}>#{id}</Link>
      </h1>
      <p className="muted">
        {model.kind.replace("_", " ")} · {model.problem} · {t("try.version", { version: model.version })}
      </p>
      <div className="try-grid">
        <div>
          {model.kind === "tabular" ? (
            <TabularForm
              id={id}
              model={model}
              onValues={(v, missing) => {
                setValues(v);
                setIncomplete(missing);
              }}
            />
          ) : (
            <ImageTry id={id} model={model} />
          )}
        </div>
        <div>
          <h2>{t("try.sameCall")}</h2>
          {incomplete ? <p className="muted small">{t("try.emptyNull")}</p> : null}
          <SnippetTabs snippets={predictSnippets(location.origin, id, model, values)} />
        </div>
      </div>
      <BatchScoring id={id} model={model} />
    </section>
  );
}

/** The answer, with the x-input-check header's finding beside it (the body is the seed's, unchanged). */
type Checked = Prediction & { inputCheck?: string | null };

async function predict(id: number, message: unknown): Promise<Checked> {
  let inputCheck: string | null = null;
  const r = await api<Prediction>("POST", `/v1/experiments/${id}/predict`, { message }, (h) => (inputCheck = h.get("x-input-check")));
  return { ...r, inputCheck };
}

/** The warning an unfamiliar input gets: the answer stands, but the model has not seen anything like it. */
function UnfamiliarNote({ result, image }: { result: Checked; image: boolean }) {
  const { t } = useTranslation("tryit");
  if (result.inputCheck !== "unfamiliar") return null;
  return (
    <p className="note warn" role="alert" data-testid="input-check-note">
      {t(image ? "try.unfamiliarImage" : "try.unfamiliarRow")}
    </p>
  );
}

function ScoreTable({ model, result }: { model: Model; result: Prediction }) {
  const { t } = useTranslation("tryit");
  if (model.problem === "regression") {
    return (
      <p className="result" data-testid="prediction">
        {t("try.predictedValue", { name: Object.values(model.classes)[0] ?? t("try.value") })}{" "}
        <strong>{formatNumber(result.score[0], 4)}</strong>
      </p>
    );
  }
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label={t("try.prediction")} data-testid="prediction">
        <thead>
          <tr>
            <th scope="col">{t("try.class")}</th>
            <th scope="col">{t("try.score")}</th>
            <th scope="col">{t("try.threshold")}</th>
            <th scope="col">{t("try.predicted")}</th>
          </tr>
        </thead>
        <tbody>
          {result.score.map((s, i) => (
            <tr key={i} className={result.prediccion?.[i] ? "hit" : undefined}>
              <td>{result.classes[String(i)] ?? i}</td>
              <td>
                <meter min={0} max={1} value={s} aria-label={t("try.scoreOf", { name: result.classes[String(i)] ?? i })} />{" "}
                {formatNumber(s)}
              </td>
              <td>
                {model.thresholds?.[i] !== undefined
                  ? formatNumber(model.thresholds[i])
                  : model.problem === "multiclass"
                    ? t("try.highest")
                    : "–"}
              </td>
              <td>{result.prediccion?.[i] ? t("try.yes") : t("try.no")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TabularForm({
  id,
  model,
  onValues,
}: {
  id: number;
  model: Model;
  onValues: (v: Array<number | null>, incomplete: boolean) => void;
}) {
  const { t } = useTranslation("tryit");
  const cols = model.inputs.columns ?? (model.inputs.data_cols ?? []).map((name) => ({ name, type: "numeric" as const }));
  const [raw, setRaw] = useState<string[]>(() => cols.map((c) => ("categories" in c && c.categories ? "0" : "")));
  const [result, setResult] = useState<Prediction | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [pasteProblem, setPasteProblem] = useState<string | null>(null);
  const numbers = raw.map((v) => (v.trim() === "" ? NaN : Number(v)));
  // An empty field of a column trained with missing values (NA in the CSV) is sent as null, the API's "unknown".
  const takesNull = cols.map((c) => "missing" in c && !!c.missing);
  const message = numbers.map((n, i) => (Number.isNaN(n) && takesNull[i] ? null : n));
  // The snippets show what the form would send: an empty required field is null there, never an invented 0.
  // Only the fields' text decides: `message` is derived from it on every render, and the parent's callback is new each time.
  /* eslint-disable react-hooks/exhaustive-deps */
  useEffect(
    () =>
      onValues(
        message.map((n) => (n === null || Number.isFinite(n) ? n : null)),
        message.some((n) => n !== null && !Number.isFinite(n)),
      ),
    [raw],
  );
  /* eslint-enable react-hooks/exhaustive-deps */
  const warnings = cols.map((c, i) => outOfRange(c, raw[i]));
  const flagged = cols.map((c, i) => (warnings[i] ? `${c.name} ${raw[i]}` : null)).filter((w): w is string => w !== null);

  // Any change makes the shown result stale: it goes at once rather than sit beside inputs it was not computed from.
  const change = (next: string[]) => {
    setRaw(next);
    setResult(null);
    setError(null);
  };
  const paste = (e: React.ClipboardEvent<HTMLInputElement>) => {
    const parsed = parsePastedRow(e.clipboardData.getData("text"), cols);
    if (parsed === null) return; // one value: the browser pastes it into the field
    e.preventDefault();
    if (!parsed.ok) {
      const { kind, ...values } = parsed.problem;
      return setPasteProblem(t("try.pasteNotUsed", { message: t(`try.paste.${kind}`, values) }));
    }
    setPasteProblem(null);
    change(parsed.values);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      setResult(await predict(id, message));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} aria-label={t("try.inputsLabel")}>
      <h2>{t("try.inputs")}</h2>
      <p className="muted small">{t("try.pasteHelp")}</p>
      {pasteProblem ? (
        <p className="field-warning" role="alert">
          {pasteProblem}
        </p>
      ) : null}
      <div className="grid2">
        {cols.map((c, i) => {
          const set = (v: string) => change(raw.map((x, j) => (j === i ? v : x)));
          const problem = warnings[i];
          const warning = problem ? (
            <span className="field-warning" data-testid={`range-warning-${i}`}>
              ⚠ {t(`try.${problem.kind}`, problem)}
            </span>
          ) : null;
          // A model never shows a categorical column's values (they may identify patients): the form takes the
          // value's code, 0..n-1 in the sorted order of the values as written in the training CSV.
          const categories = "categories" in c ? c.categories : undefined;
          return categories ? (
            <label key={c.name}>
              {c.name} <span className="muted">{t("try.code", { max: categories - 1 })}</span>
              <input
                type="number"
                min={0}
                max={categories - 1}
                step={1}
                required
                value={raw[i]}
                onChange={(e) => set(e.target.value)}
                onPaste={paste}
              />
              {warning}
            </label>
          ) : (
            <label key={c.name}>
              {c.name}
              {takesNull[i] ? <span className="muted"> {t("try.mayBeEmpty")}</span> : null}
              <input
                type="number"
                step="any"
                required={!takesNull[i]}
                value={raw[i]}
                onChange={(e) => set(e.target.value)}
                onPaste={paste}
                placeholder={"min" in c && c.min !== undefined && "max" in c && c.max !== undefined ? `${c.min} – ${c.max}` : undefined}
              />
              {warning}
            </label>
          );
        })}
      </div>
      <button type="submit">{t("try.predict")}</button>
      <ErrorBox error={error} title={t("try.failed")} />
      {result && flagged.length ? (
        <p className="note warn" role="note" data-testid="range-note">
          {t("try.outOfRange", { count: flagged.length, values: flagged.join(", ") })}
        </p>
      ) : null}
      {result ? <UnfamiliarNote result={result} image={false} /> : null}
      {result ? <ScoreTable model={model} result={result} /> : null}
    </form>
  );
}

/**
 * A .dcm file is sent as data:application/dicom (the API sniffs the bytes, but it takes only image/* and
 * application/dicom data: URIs, and browsers give a .dcm file no type or application/octet-stream).
 */
function asDicomDataUrl(file: File, url: string): string {
  if (!/\.(dcm|dicom)$/i.test(file.name) && file.type !== "application/dicom") return url;
  return `data:application/dicom;base64,${url.slice(url.indexOf(",") + 1)}`;
}

function readDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    // readAsDataURL always yields a string.
    r.onload = () => resolve(r.result as string);
    r.onerror = () => reject(r.error ?? new Error(`could not read ${file.name}`));
    r.readAsDataURL(file);
  });
}

function ImageTry({ id, model }: { id: number; model: Model }) {
  const { t } = useTranslation("tryit");
  const [image, setImage] = useState<string | null>(null);
  const [size, setSize] = useState<{ w: number; h: number } | null>(null);
  const [result, setResult] = useState<Prediction | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [opacity, setOpacity] = useState(0.6);
  const [minScore, setMinScore] = useState(model.detection?.score_threshold ?? 0.25);
  const [camClass, setCamClass] = useState<string | null>(null);

  const run = async (file: File) => {
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const url = asDicomDataUrl(file, await readDataUrl(file));
      setImage(url);
      const r = await predict(id, url);
      setResult(r);
      setCamClass(Object.keys(r.gradients ?? {})[0] ?? null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div>
      <h2>{t("try.image")}</h2>
      <label
        className="dropzone"
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          e.preventDefault();
          const f = e.dataTransfer.files[0];
          if (f) void run(f);
        }}
      >
        {t("try.pickImage")}
        <input
          type="file"
          accept="image/*,.dcm,.dicom,application/dicom"
          data-testid="image-input"
          onChange={(e) => e.target.files?.[0] && run(e.target.files[0])}
        />
      </label>
      {busy ? <p aria-busy="true">{t("try.predicting")}</p> : null}
      <ErrorBox error={error} title={t("try.failed")} />
      {result ? <UnfamiliarNote result={result} image /> : null}
      {image && result ? (
        <>
          <div className="overlay-wrap" data-testid="overlay">
            {image.startsWith("data:application/dicom") ? (
              <p className="muted small">{t("try.dicomNoPreview")}</p>
            ) : (
              <img
                src={image}
                alt={t("try.imageAlt")}
                onLoad={(e) => setSize({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })}
              />
            )}
            {result.gradients && camClass && result.gradients[camClass] ? (
              <GradCam map={result.gradients[camClass]} opacity={opacity} />
            ) : null}
            {result.boxes && size ? <Boxes result={result} size={size} minScore={minScore} /> : null}
          </div>
          {result.gradients && camClass && result.gradients[camClass] ? <GradCamLegend /> : null}
          {result.gradients && Object.keys(result.gradients).length ? (
            <div className="grid2">
              <label>
                {t("try.opacity")}
                <input
                  type="range"
                  min={0}
                  max={1}
                  step={0.05}
                  value={opacity}
                  onChange={(e) => setOpacity(Number(e.target.value))}
                  data-testid="opacity"
                />
              </label>
              <label>
                {t("try.mapOf")}
                <select value={camClass ?? ""} onChange={(e) => setCamClass(e.target.value)}>
                  {Object.keys(result.gradients).map((k) => (
                    <option key={k} value={k}>
                      {result.classes[k] ?? k}
                    </option>
                  ))}
                </select>
              </label>
            </div>
          ) : model.kind === "vision_classification" ? (
            <p className="muted small">{t("try.noMap")}</p>
          ) : null}
          {result.boxes ? (
            <label>
              {t("try.minScore", { score: formatNumber(minScore, 2) })}
              <input
                type="range"
                min={model.detection?.score_threshold ?? 0}
                max={1}
                step={0.01}
                value={minScore}
                onChange={(e) => setMinScore(Number(e.target.value))}
                data-testid="score-slider"
              />
            </label>
          ) : null}
          {result.boxes ? <BoxList result={result} minScore={minScore} /> : <ScoreTable model={model} result={result} />}
        </>
      ) : null}
      <PacsTry
        id={id}
        render={(r) =>
          r.boxes ? <BoxList result={r} minScore={model.detection?.score_threshold ?? 0} /> : <ScoreTable model={model} result={r} />
        }
      />
    </div>
  );
}

/** What the overlay's colours mean: the same ramp as the canvas (lib/gradcam.ts), low to high. */
function GradCamLegend() {
  const { t } = useTranslation("tryit");
  return (
    <div className="cam-legend" data-testid="gradcam-legend">
      <span>{t("try.lessInfluence")}</span>
      <span className="ramp" style={{ background: rampGradient() }} role="img" aria-label={t("try.scaleLabel")} />
      <span>{t("try.moreInfluence")}</span>
    </div>
  );
}

function GradCam({ map, opacity }: { map: number[][]; opacity: number }) {
  const { t } = useTranslation("tryit");
  const canvas = useRef<HTMLCanvasElement>(null);
  const pixels = useMemo(() => gradcamPixels(map), [map]);
  useEffect(() => {
    const c = canvas.current;
    if (!c || !map.length) return;
    c.width = map[0].length;
    c.height = map.length;
    c.getContext("2d")!.putImageData(new ImageData(new Uint8ClampedArray(pixels), c.width, c.height), 0, 0);
  }, [map, pixels]);
  return <canvas ref={canvas} className="cam" style={{ opacity }} data-testid="gradcam" aria-label={t("try.gradcam")} role="img" />;
}

function Boxes({ result, size, minScore }: { result: Prediction; size: { w: number; h: number }; minScore: number }) {
  const { t } = useTranslation("tryit");
  return (
    <svg
      className="boxes"
      viewBox={`0 0 ${size.w} ${size.h}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={t("try.detectedBoxes")}
      data-testid="boxes"
    >
      {result.boxes!.map((b, i) =>
        result.score[i] >= minScore ? (
          <g key={i}>
            <rect x={b[0]} y={b[1]} width={b[2] - b[0]} height={b[3] - b[1]} vectorEffect="non-scaling-stroke" />
            <text x={b[0] + 2} y={Math.max(10, b[1] - 3)} fontSize={Math.max(size.w, size.h) / 22}>
              {result.classes[String(result.classification?.[i])] ?? result.classification?.[i]} {result.score[i].toFixed(2)}
            </text>
          </g>
        ) : null,
      )}
    </svg>
  );
}

function BoxList({ result, minScore }: { result: Prediction; minScore: number }) {
  const { t } = useTranslation("tryit");
  const shown = result.boxes!.map((b, i) => ({ b, i })).filter(({ i }) => result.score[i] >= minScore);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label={t("try.detections")} data-testid="prediction">
        <caption>{t("try.boxesCaption", { n: shown.length, total: result.boxes!.length, score: formatNumber(minScore, 2) })}</caption>
        <thead>
          <tr>
            <th scope="col">{t("try.class")}</th>
            <th scope="col">{t("try.score")}</th>
            <th scope="col">{t("try.box")}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map(({ b, i }) => (
            <tr key={i}>
              <td>{result.classes[String(result.classification?.[i])] ?? result.classification?.[i]}</td>
              <td>{formatNumber(result.score[i])}</td>
              <td>{b.map((x) => Math.round(x)).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
