import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { ClinicalSection, Manifest } from "../contract/types.js";
import { ApiError, errors, msg, say, detail, type Message } from "../errors.js";
import type { Bucket } from "../storage/bucket.js";
import {
  binaryThresholds,
  FIGURES,
  positiveThreshold,
  choose,
  countsAt,
  figuresWithIntervals,
  NoThreshold,
  roundedFigures,
  validationCurve,
  type CurvePoint,
  type Rule,
} from "./operating-point-math.js";
import type { ExperimentRepository, ModelRow } from "./repository.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/**
 * Operating points, model versions and rollback (binary classification, tables and images).
 *
 * The pipeline leaves, beside the manifest, the positive class's validation (or out-of-fold) and test scores with
 * their truth (operating_scores.json). Saving an operating point chooses a threshold on the validation pairs only,
 * computes the test figures there (patient-level bootstrap intervals), and publishes a new model version: the same
 * ONNX files (store_path), a manifest with the new thresholds and an `operating_point` record. Serving answers with
 * the version made current last, on every replica at once (the models table's trigger, migration 0010); making an
 * older version current again is the rollback.
 */

export interface OperatingScores {
  schema_version: 1;
  positive_index: number;
  validation: { source: string; score: number[]; label: number[] };
  test: { score: number[]; label: number[]; patient: number[] };
}

export type OperatingPointRequest = { rule: Rule; target?: number; threshold?: number };

const RULE_WORDS: Record<Rule, (target?: number) => string> = {
  sensitivity: (t) => `saved operating point: the highest validation threshold with sensitivity >= ${t}`,
  specificity: (t) => `saved operating point: the lowest validation threshold with specificity >= ${t}`,
  youden: () => "saved operating point: Youden's J (sensitivity + specificity - 1) at its highest on the validation data",
  f1: () => "saved operating point: the threshold maximising F1 of the positive class on the validation data",
  threshold: (t) => `saved operating point: a threshold of ${t} on the positive class's probability, chosen by hand`,
};

/** The whole record the server writes (the contract's Manifest type lists only rule, target and threshold). */
type OperatingPointRecord = {
  rule: Rule;
  target: number | null;
  threshold: number;
  from_version: number;
  created_at: string;
  [more: string]: unknown;
};

function recordOf(m: Manifest): OperatingPointRecord | null {
  return (m.operating_point as OperatingPointRecord | undefined) ?? null;
}

export class OperatingPointService {
  constructor(
    private readonly deps: {
      repo: ExperimentRepository;
      bucket: Bucket;
      audit: AuditLog;
      /** Serving's cache: the replica that saved switches before it answers (the others by notification). */
      warm: (row: ModelRow) => Promise<void>;
    },
  ) {}

  /** The experiment's current model version, or 404 / 409 (none published). */
  private async current(scope: Scope, experimentId: number): Promise<{ model: ModelRow; manifest: Manifest; retrospective: boolean }> {
    assertAllowed(scope.workspace, "experiment.read");
    const row = await this.deps.repo.byNumber(scope.workspace.id, experimentId);
    if (!row) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    const model = await this.deps.repo.currentModel(scope.workspace.id, experimentId);
    if (!model || model.experimentUuid !== row.id) {
      throw new ApiError(409, "model_not_published", msg("experiment.no_published_model", { id: experimentId, status: row.status }));
    }
    const retrospective = (row.request as { study_type?: string }).study_type === "Retrospective";
    return { model, manifest: model.manifest as Manifest, retrospective };
  }

  /** Why this model has no operating point to move, or null when it has one. */
  private unavailable(manifest: Manifest, retrospective: boolean): { status: 409 | 422; code: string; text: Message } | null {
    if (manifest.problem !== "binary" || (manifest.kind !== "tabular" && manifest.kind !== "vision_classification")) {
      return {
        status: 422,
        code: "not_binary",
        text: msg("operating.not_binary", { kind: manifest.kind, problem: manifest.problem }),
      };
    }
    if (retrospective) {
      return {
        status: 409,
        code: "retrospective_study",
        text: msg("operating.retrospective"),
      };
    }
    if (!manifest.operating_scores_file) {
      return {
        status: 409,
        code: "no_operating_scores",
        text: msg("operating.no_scores"),
      };
    }
    return null;
  }

  private async scores(model: ModelRow, manifest: Manifest): Promise<OperatingScores> {
    const file = manifest.operating_scores_file!;
    const chunks: Buffer[] = [];
    let folder = model.storePath;
    while (folder.endsWith("/")) folder = folder.slice(0, -1);
    for await (const c of await this.deps.bucket.read(`${folder}/${file}`)) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as OperatingScores;
  }

  /**
   * GET /v1/models/{id}/operating-point: the validation curve (counts at every cut, never the test pairs) for the
   * browser's explorer, and the current version's threshold on the positive class's probability.
   */
  async explorer(scope: Scope, experimentId: number) {
    const { model, manifest, retrospective } = await this.current(scope, experimentId);
    const why = this.unavailable(manifest, retrospective);
    const base = {
      experiment_id: experimentId,
      version: model.version,
      kind: manifest.kind,
      problem: manifest.problem,
    };
    if (why) return { ...base, available: false as const, message: say(why.text, "en") };
    const s = await this.scores(model, manifest);
    const positive = manifest.classes.find((c) => c.index === s.positive_index);
    const threshold = positiveThreshold(manifest.thresholds, s.positive_index);
    return {
      ...base,
      available: true as const,
      positive_class: positive ? { index: positive.index, name: positive.name } : null,
      validation_source: s.validation.source,
      validation_counts: {
        positive: s.validation.label.filter((y) => y === 1).length,
        negative: s.validation.label.filter((y) => y !== 1).length,
      },
      current: {
        threshold,
        rule: recordOf(manifest)?.rule ?? null,
        target: recordOf(manifest)?.target ?? null,
        threshold_rule: manifest.threshold_rule ?? null,
        validation: threshold === null ? null : roundedFigures(countsAt(s.validation.score, s.validation.label, threshold)),
      },
      curve: validationCurve(s.validation.score, s.validation.label),
    };
  }

  /** POST /v1/models/{id}/operating-point: a new version with the chosen threshold, made current at once. */
  async save(scope: Scope, experimentId: number, req: OperatingPointRequest, actor: AuditActor) {
    const userId = scope.userId;
    const { model, manifest, retrospective } = await this.current(scope, experimentId);
    assertAllowed(scope.workspace, "operating_point.set");
    const why = this.unavailable(manifest, retrospective);
    if (why) throw new ApiError(why.status, why.code, why.text);
    const s = await this.scores(model, manifest);
    let point: CurvePoint;
    try {
      point =
        req.rule === "threshold"
          ? { threshold: req.threshold!, ...countsAt(s.validation.score, s.validation.label, req.threshold!) }
          : choose(validationCurve(s.validation.score, s.validation.label), req.rule, req.target);
    } catch (err) {
      if (err instanceof NoThreshold) throw new ApiError(422, "no_threshold", err.text, [detail("target", err.text)]);
      throw err;
    }
    const t = point.threshold;
    const seed = Number((manifest.provenance as { seed?: number } | undefined)?.seed ?? 0) || 0;
    const validation = { source: s.validation.source, ...roundedFigures(point) };
    const test = await figuresWithIntervals(s.test, t, undefined, seed);
    const k = s.positive_index;
    const next = structuredClone(manifest);
    next.thresholds = binaryThresholds(k, t);
    next.threshold_rule = RULE_WORDS[req.rule](req.rule === "threshold" ? t : req.target);
    for (const f of FIGURES) {
      if (next.metrics.test[f]) next.metrics.test[f] = { ...test[f] };
      if (next.metrics.validation?.[f]) next.metrics.validation[f] = { value: validation[f], ci_low: null, ci_high: null };
    }
    if (next.clinical?.confusion_matrix && "counts" in next.clinical.confusion_matrix) {
      const m = [
        [0, 0],
        [0, 0],
      ];
      m[k][k] = test.counts.tp;
      m[k][1 - k] = test.counts.fn;
      m[1 - k][1 - k] = test.counts.tn;
      m[1 - k][k] = test.counts.fp;
      (next.clinical as ClinicalSection & { confusion_matrix: { counts: number[][] } }).confusion_matrix.counts = m;
    }
    const record = {
      rule: req.rule,
      target: req.rule === "sensitivity" || req.rule === "specificity" ? req.target! : null,
      threshold: t,
      positive_class: manifest.classes.find((c) => c.index === k)?.name ?? String(k),
      validation,
      test,
      from_version: model.version,
      created_at: new Date().toISOString(),
      created_by: userId,
    };
    next.operating_point = record;
    // The monitoring baseline's positive rate is the new threshold's, on the same validation and test patients.
    const baseline = (next as { monitoring_baseline?: { positive_rate?: number } }).monitoring_baseline;
    if (baseline) {
      const all = [...s.validation.score, ...s.test.score];
      baseline.positive_rate = all.length ? Math.round((all.filter((v) => v >= t).length / all.length) * 1e6) / 1e6 : undefined;
    }
    const row = await this.deps.repo.publishVersion(model, next, { event: "operating_point_saved", metrics: next.metrics.test });
    await this.deps.warm(row);
    await this.deps.audit.record(actor, "operating_point_saved", `experiment ${experimentId}`, {
      version: row.version,
      from_version: model.version,
      rule: req.rule,
      ...(record.target !== null ? { target: record.target } : {}),
      threshold: t,
    });
    return { status: 201 as const, body: versionView(row, row) };
  }

  /** GET /v1/models/{id}/versions: every version, newest first, and which one serves. */
  async versions(scope: Scope, experimentId: number) {
    const { model } = await this.current(scope, experimentId);
    const rows = await this.deps.repo.modelsOf(model.experimentUuid);
    const emails = await this.deps.repo.emailsOf([...new Set(rows.flatMap((r) => (r.approvedBy ? [r.approvedBy] : [])))]);
    return {
      experiment_id: experimentId,
      current_version: model.version,
      data: rows.reverse().map((r) => versionView(r, model, emails)),
    };
  }

  /** POST /v1/models/{id}/versions/{version}/current: serve that version again (rollback), on every replica. */
  async makeCurrent(scope: Scope, experimentId: number, version: number, actor: AuditActor) {
    const { model } = await this.current(scope, experimentId);
    assertAllowed(scope.workspace, "operating_point.set");
    const rows = await this.deps.repo.modelsOf(model.experimentUuid);
    const target = rows.find((r) => r.version === version);
    if (!target) throw errors.notFound(msg("experiment.version_not_found", { version, id: experimentId }));
    if (target.id === model.id) return versionView(model, model);
    const row = await this.deps.repo.makeModelCurrent(target, {
      event: "model_version_restored",
      metrics: (target.manifest as Manifest).metrics.test,
    });
    await this.deps.warm(row);
    await this.deps.audit.record(actor, "model_version_restored", `experiment ${experimentId}`, {
      version: row.version,
      from_version: model.version,
    });
    return versionView(row, row);
  }
}

/** A version's approval in the history (issue 50 item 4): who (e-mail, or a former member), when, for what. */
function approvalOf(row: ModelRow, emails: ReadonlyMap<string, string>) {
  if (!row.approvedAt) return null;
  const email = row.approvedBy ? (emails.get(row.approvedBy) ?? null) : null;
  return { approved_by: email, former_member: email === null, approved_at: row.approvedAt, intended_use: row.approvedIntendedUse };
}

export function versionView(row: ModelRow, current: ModelRow, emails: ReadonlyMap<string, string> = new Map()) {
  const m = row.manifest as Manifest;
  const op = recordOf(m);
  const pick = (name: string) => (m.metrics.test as Record<string, unknown>)[name] ?? null;
  return {
    version: row.version,
    current: row.id === current.id,
    created_at: row.createdAt,
    made_current_at: row.madeCurrentAt,
    thresholds: m.thresholds ?? null,
    threshold_rule: m.threshold_rule ?? null,
    operating_point: op,
    approval: approvalOf(row, emails),
    test: { sensitivity: pick("sensitivity"), specificity: pick("specificity"), ppv: pick("ppv"), npv: pick("npv") },
  };
}
