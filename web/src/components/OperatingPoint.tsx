import { useCallback, useEffect, useMemo, useState } from "react";
import { api } from "../api/client";
import type { ModelVersion, ModelVersions, OperatingPointBody, OperatingPointExplorer } from "../api/types";
import { figuresAt, nearestIndex, ofHundred, presetIndex, type Rule } from "../lib/operating-point";
import { formatDate } from "../lib/format";
import { ErrorBox, Interval } from "./ui";

/**
 * The operating point of a binary model: a slider over the validation (or out-of-fold) thresholds with live
 * sensitivity, specificity, PPV and NPV computed here from the validation counts (the test set is never shown
 * while choosing: it would become a tuning set), presets, Save (a new model version that /predict uses at once,
 * with its test figures), and the versions with Make current (rollback).
 */
export function OperatingPointPanel({ experimentId, onChanged }: { experimentId: number; onChanged: () => void }) {
  const [data, setData] = useState<OperatingPointExplorer | null>(null);
  const [versions, setVersions] = useState<ModelVersions | null>(null);
  const [index, setIndex] = useState(-1);
  const [rule, setRule] = useState<{ rule: Rule; target?: number }>({ rule: "threshold" });
  const [sensTarget, setSensTarget] = useState("0.95");
  const [specTarget, setSpecTarget] = useState("0.90");
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<ModelVersion | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    try {
      const d = await api<OperatingPointExplorer>("GET", `/v1/models/${experimentId}/operating-point`);
      setData(d);
      if (d.available && d.curve) {
        // The slider starts at the current version's threshold; Save then sends that point, not an earlier preset.
        setIndex(nearestIndex(d.curve, d.current?.threshold));
        setRule({ rule: "threshold" });
      }
      if (d.available) setVersions(await api<ModelVersions>("GET", `/v1/models/${experimentId}/versions`));
    } catch (err) {
      setError(err);
    }
  }, [experimentId]);
  useEffect(() => void load(), [load]);

  const curve = useMemo(() => data?.curve ?? [], [data]);
  const point = index >= 0 ? curve[index] : undefined;
  const f = point ? figuresAt(point) : undefined;
  const positive = data?.positive_class?.name ?? "the positive class";
  const currentIndex = data?.current ? nearestIndex(curve, data.current.threshold) : -1;

  if (!data) return error ? <ErrorBox error={error} /> : null;
  if (!data.available) {
    return (
      <section className="card" aria-label="Operating point" data-testid="operating-point">
        <h2>Operating point</h2>
        <p className="muted">{data.message}</p>
      </section>
    );
  }

  const preset = (r: Exclude<Rule, "threshold">, target?: number) => {
    setNote(null);
    const i = presetIndex(curve, r, target);
    if (i < 0) {
      setNote(`No threshold reaches that on the validation data.`);
      return;
    }
    setIndex(i);
    setRule({ rule: r, target });
  };

  const save = async () => {
    if (!point) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    const body: OperatingPointBody =
      rule.rule === "threshold"
        ? { rule: "threshold", threshold: point.threshold }
        : { rule: rule.rule, ...(rule.target !== undefined ? { target: rule.target } : {}) };
    try {
      const v = await api<ModelVersion>("POST", `/v1/models/${experimentId}/operating-point`, body);
      setSaved(v);
      await load();
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const makeCurrent = async (version: number) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      await api<ModelVersion>("POST", `/v1/models/${experimentId}/versions/${version}/current`);
      await load();
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const ruleWords =
    rule.rule === "sensitivity"
      ? `preset: sensitivity ≥ ${rule.target}`
      : rule.rule === "specificity"
        ? `preset: specificity ≥ ${rule.target}`
        : rule.rule === "youden"
          ? "preset: Youden (best sensitivity + specificity)"
          : rule.rule === "f1"
            ? "preset: best F1"
            : "set by hand";

  return (
    <section className="card operating-point" aria-label="Operating point" data-testid="operating-point">
      <h2>Operating point</h2>
      <p className="muted small">
        Where the model draws the line between flagging a patient as <strong>{positive}</strong> or not. Chosen on the{" "}
        {data.validation_source} ({data.validation_counts?.positive} with {positive}, {data.validation_counts?.negative} without), never on
        the test set. Saving publishes a new model version that predictions use at once; its test-set figures are computed then.
      </p>
      <label className="op-slider">
        <span>
          Flag a patient when the probability of {positive} is at least{" "}
          <strong data-testid="op-threshold">{point?.threshold.toFixed(3)}</strong>
          {index === currentIndex ? <span className="muted small"> (the current version's)</span> : null}
        </span>
        <input
          type="range"
          min={0}
          max={Math.max(0, curve.length - 1)}
          step={1}
          // Left: a low threshold (more flagged); right: a high threshold.
          value={curve.length - 1 - Math.max(0, index)}
          onChange={(e) => {
            setIndex(curve.length - 1 - Number(e.target.value));
            setRule({ rule: "threshold" });
            setNote(null);
          }}
          aria-label="Threshold"
          data-testid="op-range"
        />
        <span className="muted small op-ends">
          <span>lower: more patients flagged</span>
          <span>higher: fewer flagged</span>
        </span>
      </label>
      {f ? (
        <dl className="facts op-figures" data-testid="op-figures">
          <div>
            <dt>Sensitivity {pct(f.sensitivity)}</dt>
            <dd>
              of 100 patients with {positive}, <strong>{ofHundred(f.sensitivity)}</strong> are flagged
            </dd>
          </div>
          <div>
            <dt>Specificity {pct(f.specificity)}</dt>
            <dd>
              of 100 patients without {positive}, <strong>{ofHundred(f.specificity)}</strong> are not flagged
            </dd>
          </div>
          <div>
            <dt>PPV {pct(f.ppv)}</dt>
            <dd>
              of 100 flagged patients, <strong>{ofHundred(f.ppv)}</strong> have {positive}
            </dd>
          </div>
          <div>
            <dt>NPV {pct(f.npv)}</dt>
            <dd>
              of 100 patients not flagged, <strong>{ofHundred(f.npv)}</strong> do not have {positive}
            </dd>
          </div>
          <div>
            <dt>Flagged</dt>
            <dd>
              {f.flagged} of {f.total} validation patients
            </dd>
          </div>
        </dl>
      ) : null}
      <div className="actions op-presets">
        <span className="small">Presets:</span>
        <span className="op-preset">
          <button type="button" className="secondary" onClick={() => preset("sensitivity", Number(sensTarget))}>
            Sensitivity ≥
          </button>
          <input
            aria-label="Sensitivity target"
            type="number"
            min={0}
            max={1}
            step={0.01}
            value={sensTarget}
            onChange={(e) => setSensTarget(e.target.value)}
          />
        </span>
        <span className="op-preset">
          <button type="button" className="secondary" onClick={() => preset("specificity", Number(specTarget))}>
            Specificity ≥
          </button>
          <input
            aria-label="Specificity target"
            type="number"
            min={0}
            max={1}
            step={0.01}
            value={specTarget}
            onChange={(e) => setSpecTarget(e.target.value)}
          />
        </span>
        <button type="button" className="secondary" onClick={() => preset("youden")}>
          Youden
        </button>
        <button type="button" className="secondary" onClick={() => preset("f1")}>
          Best F1
        </button>
      </div>
      {note ? <p className="note">{note}</p> : null}
      <div className="actions">
        <button type="button" onClick={() => void save()} disabled={busy || !point} data-testid="op-save">
          {busy ? "Saving…" : `Save as version ${(versions?.data[0]?.version ?? 0) + 1}`}
        </button>
        <span className="muted small">({ruleWords})</span>
      </div>
      <ErrorBox error={error} />
      {saved ? (
        <p className="note" role="status" data-testid="op-saved">
          Saved as version {saved.version}, now used by predictions. On the test set at this threshold: sensitivity{" "}
          <Interval v={saved.operating_point?.test.sensitivity} />, specificity <Interval v={saved.operating_point?.test.specificity} />,
          PPV <Interval v={saved.operating_point?.test.ppv} />, NPV <Interval v={saved.operating_point?.test.npv} /> (95% intervals over
          patients).
        </p>
      ) : null}
      {versions ? (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Model versions">
          <table className="op-versions" data-testid="op-versions">
            <caption>Model versions</caption>
            <thead>
              <tr>
                <th>Version</th>
                <th>Threshold</th>
                <th>How it was chosen</th>
                <th>Test sensitivity</th>
                <th>Test specificity</th>
                <th>Published</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {versions.data.map((v) => (
                <tr key={v.version} className={v.current ? "current" : undefined}>
                  <td>{v.version}</td>
                  <td>
                    {v.operating_point
                      ? v.operating_point.threshold.toFixed(3)
                      : positiveThreshold(v.thresholds, data.positive_class?.index)}
                  </td>
                  <td>{v.operating_point ? ruleText(v.operating_point.rule, v.operating_point.target) : "built by the pipeline"}</td>
                  <td>
                    <Interval v={v.test.sensitivity as IntervalValue} />
                  </td>
                  <td>
                    <Interval v={v.test.specificity as IntervalValue} />
                  </td>
                  <td>{formatDate(String(v.created_at))}</td>
                  <td>
                    {v.current ? (
                      <strong>current</strong>
                    ) : (
                      <button type="button" className="secondary" disabled={busy} onClick={() => void makeCurrent(v.version)}>
                        Make current
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

type IntervalValue = { value: number | null; ci_low: number | null; ci_high: number | null } | undefined;

function pct(v: number | null): string {
  return v === null ? "–" : `${(v * 100).toFixed(1)}%`;
}

function ruleText(rule: string, target: number | null): string {
  if (rule === "sensitivity") return `sensitivity ≥ ${target}`;
  if (rule === "specificity") return `specificity ≥ ${target}`;
  if (rule === "youden") return "Youden";
  if (rule === "f1") return "best F1";
  return "set by hand";
}

function positiveThreshold(thresholds: number[] | null, k: number | undefined): string {
  if (!thresholds || thresholds.length !== 2 || k === undefined) return "–";
  return (k === 1 ? thresholds[1] : 1 - thresholds[1]).toFixed(3);
}
