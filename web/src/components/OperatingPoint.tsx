import type { TFunction } from "i18next";
import { useCallback, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { ModelVersion, ModelVersions, OperatingPointBody, OperatingPointExplorer } from "../api/types";
import { figuresAt, nearestIndex, ofHundred, presetIndex, type Rule } from "../lib/operating-point";
import { formatCount, formatDate, formatNumber, formatPercent } from "../lib/format";
import { NotAllowedNote, usePermission } from "../workspace";
import { ErrorBox, Interval } from "./ui";

/**
 * The operating point of a binary model: a slider over the validation (or out-of-fold) thresholds with live
 * sensitivity, specificity, PPV and NPV computed here from the validation counts (the test set is never shown
 * while choosing: it would become a tuning set), presets, Save (a new model version that /predict uses at once,
 * with its test figures), and the versions with Make current (rollback).
 */
export function OperatingPointPanel({ experimentId, onChanged }: { experimentId: number; onChanged: () => void }) {
  const { t } = useTranslation("result");
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
  // A new version (operating point, input check) is operating_point.set: owners and editors.
  const canSet = usePermission("operating_point.set");

  const load = useCallback(async () => {
    try {
      const d = await call("get", "/v1/models/{experiment_id}/operating-point", { path: { experiment_id: experimentId } });
      setData(d);
      if (d.available && d.curve) {
        // The slider starts at the current version's threshold; Save then sends that point, not an earlier preset.
        setIndex(nearestIndex(d.curve, d.current?.threshold));
        setRule({ rule: "threshold" });
      }
      if (d.available) setVersions(await call("get", "/v1/models/{experiment_id}/versions", { path: { experiment_id: experimentId } }));
    } catch (err) {
      setError(err);
    }
  }, [experimentId]);
  useEffect(() => void load(), [load]);

  const curve = useMemo(() => data?.curve ?? [], [data]);
  const point = index >= 0 ? curve[index] : undefined;
  const f = point ? figuresAt(point) : undefined;
  const positive = data?.positive_class?.name ?? t("op.thePositiveClass");
  const currentIndex = data?.current ? nearestIndex(curve, data.current.threshold) : -1;

  if (!data) return error ? <ErrorBox error={error} /> : null;
  if (!data.available) {
    return (
      <section className="card" aria-label={t("op.title")} data-testid="operating-point">
        <h2>{t("op.title")}</h2>
        <p className="muted">{data.message}</p>
      </section>
    );
  }

  const preset = (r: Exclude<Rule, "threshold">, target?: number) => {
    setNote(null);
    const i = presetIndex(curve, r, target);
    if (i < 0) {
      setNote(t("op.noThreshold"));
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
      const v = await call("post", "/v1/models/{experiment_id}/operating-point", { path: { experiment_id: experimentId }, body });
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
      await call("post", "/v1/models/{experiment_id}/versions/{version}/current", { path: { experiment_id: experimentId, version } });
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
      ? t("op.presetSensitivity", { target: rule.target })
      : rule.rule === "specificity"
        ? t("op.presetSpecificity", { target: rule.target })
        : rule.rule === "youden"
          ? t("op.presetYouden")
          : rule.rule === "f1"
            ? t("op.presetF1")
            : t("op.byHand");

  return (
    <section className="card operating-point" aria-label={t("op.title")} data-testid="operating-point">
      <h2>{t("op.title")}</h2>
      <p className="muted small">
        {t("op.introWhere")} <strong>{positive}</strong>
        {t("op.introChosen", {
          // The pipeline's words (operating_scores.write's val_source).
          source:
            data.validation_source === "validation split"
              ? t("op.sourceValidation")
              : data.validation_source?.startsWith("out-of-fold")
                ? t("op.sourceOutOfFold")
                : data.validation_source,
          positive,
          withCount: formatCount(data.validation_counts?.positive),
          withoutCount: formatCount(data.validation_counts?.negative),
        })}
      </p>
      <label className="op-slider">
        <span>
          {t("op.flagWhen", { positive })} <strong data-testid="op-threshold">{point ? formatNumber(point.threshold) : ""}</strong>
          {index === currentIndex ? <span className="muted small"> {t("op.currentVersions")}</span> : null}
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
          aria-label={t("inputs.threshold")}
          data-testid="op-range"
        />
        <span className="muted small op-ends">
          <span>{t("op.lower")}</span>
          <span>{t("op.higher")}</span>
        </span>
      </label>
      {f ? (
        <dl className="facts op-figures" data-testid="op-figures">
          <div>
            <dt>
              {t("metric.short.sensitivity")} {pct(f.sensitivity)}
            </dt>
            <dd>
              {t("op.sensBefore", { positive })} <strong>{ofHundred(f.sensitivity)}</strong> {t("op.sensAfter")}
            </dd>
          </div>
          <div>
            <dt>
              {t("metric.short.specificity")} {pct(f.specificity)}
            </dt>
            <dd>
              {t("op.specBefore", { positive })} <strong>{ofHundred(f.specificity)}</strong> {t("op.specAfter")}
            </dd>
          </div>
          <div>
            <dt>
              {t("metric.short.ppv")} {pct(f.ppv)}
            </dt>
            <dd>
              {t("op.ppvBefore")} <strong>{ofHundred(f.ppv)}</strong> {t("op.ppvAfter", { positive })}
            </dd>
          </div>
          <div>
            <dt>
              {t("metric.short.npv")} {pct(f.npv)}
            </dt>
            <dd>
              {t("op.npvBefore")} <strong>{ofHundred(f.npv)}</strong> {t("op.npvAfter", { positive })}
            </dd>
          </div>
          <div>
            <dt>{t("op.flagged")}</dt>
            <dd>{t("op.flaggedValue", { n: formatCount(f.flagged), total: formatCount(f.total) })}</dd>
          </div>
        </dl>
      ) : null}
      <div className="actions op-presets">
        <span className="small">{t("op.presets")}</span>
        <span className="op-preset">
          <button type="button" className="secondary" onClick={() => preset("sensitivity", Number(sensTarget))}>
            {t("metric.short.sensitivity")} ≥
          </button>
          <input
            aria-label={t("op.sensTarget")}
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
            {t("metric.short.specificity")} ≥
          </button>
          <input
            aria-label={t("op.specTarget")}
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
          {t("op.bestF1")}
        </button>
      </div>
      {note ? <p className="note">{note}</p> : null}
      {canSet.allowed ? (
        <div className="actions">
          <button type="button" onClick={() => void save()} disabled={busy || !point} data-testid="op-save">
            {busy ? t("labels.saving", { ns: "experiments" }) : t("op.saveAs", { version: (versions?.data[0]?.version ?? 0) + 1 })}
          </button>
          <span className="muted small">({ruleWords})</span>
        </div>
      ) : (
        // The slider still shows what another cut would do; saving it is a new model version, which the role may not make.
        <NotAllowedNote allowance={canSet} />
      )}
      <ErrorBox error={error} />
      {saved ? (
        <p className="note" role="status" data-testid="op-saved">
          {t("op.savedIntro", { version: saved.version })} {t("op.savedSens")} <Interval v={saved.operating_point?.test.sensitivity} />,{" "}
          {t("op.savedSpec")} <Interval v={saved.operating_point?.test.specificity} />, {t("metric.short.ppv")}{" "}
          <Interval v={saved.operating_point?.test.ppv} />, {t("metric.short.npv")} <Interval v={saved.operating_point?.test.npv} />{" "}
          {t("op.savedIntervals")}
        </p>
      ) : null}
      {versions ? (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t("op.versions")}>
          <table className="op-versions" data-testid="op-versions">
            <caption>{t("op.versions")}</caption>
            <thead>
              <tr>
                <th>{t("op.version")}</th>
                <th>{t("inputs.threshold")}</th>
                <th>{t("op.how")}</th>
                <th>{t("op.testSens")}</th>
                <th>{t("op.testSpec")}</th>
                <th>{t("op.published")}</th>
                <th>{t("op.approvedCol")}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {versions.data.map((v) => (
                <tr key={v.version} className={v.current ? "current" : undefined}>
                  <td>{v.version}</td>
                  <td>
                    {v.operating_point
                      ? formatNumber(v.operating_point.threshold)
                      : positiveThreshold(v.thresholds, data.positive_class?.index)}
                  </td>
                  <td>{v.operating_point ? ruleText(t, v.operating_point.rule, v.operating_point.target) : t("op.byPipeline")}</td>
                  <td>
                    <Interval v={v.test.sensitivity as IntervalValue} />
                  </td>
                  <td>
                    <Interval v={v.test.specificity as IntervalValue} />
                  </td>
                  <td>{formatDate(String(v.created_at))}</td>
                  <td data-testid="op-version-approval">
                    {/* Who approved this version for use (issue 50: a second pair of eyes), or a dash. */}
                    {v.approval ? (v.approval.approved_by ?? t("approval.formerMember")) : "–"}
                  </td>
                  <td>
                    {v.current ? (
                      <strong>{t("op.current")}</strong>
                    ) : !canSet.allowed ? null : (
                      <button type="button" className="secondary" disabled={busy} onClick={() => void makeCurrent(v.version)}>
                        {t("op.makeCurrent")}
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
  return v === null ? "–" : formatPercent(v);
}

function ruleText(t: TFunction<"result">, rule: string, target: number | null): string {
  if (rule === "sensitivity") return t("op.ruleSensitivity", { target });
  if (rule === "specificity") return t("op.ruleSpecificity", { target });
  if (rule === "youden") return "Youden";
  if (rule === "f1") return t("op.bestF1");
  return t("op.byHand");
}

function positiveThreshold(thresholds: number[] | null, k: number | undefined): string {
  if (!thresholds || thresholds.length !== 2 || k === undefined) return "–";
  return formatNumber(k === 1 ? thresholds[1] : 1 - thresholds[1]);
}
