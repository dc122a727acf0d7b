import { createHash } from "node:crypto";
import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { Manifest } from "../contract/types.js";
import { ApiError, msg, detail, say, type Message } from "../errors.js";
import type { Logger } from "../logger.js";
import { dicomWebInstanceUrl } from "../net/dicomweb.js";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { classNames } from "../serving/manifest.js";
import type { LoadedModel } from "../serving/model-cache.js";
import { DEFAULT_CAPTION, underRoot, type PacsConnections, type PacsTarget } from "./connection.js";
import { secondaryCapture } from "./secondary-capture.js";
import { readSource, SourceError, type SourceImage } from "./source.js";
import { stow } from "./stow.js";
import { structuredReport, type AnswerFacts, type WrittenObject } from "./structured-report.js";
import type { ServingScope } from "../serving/index.js";

/**
 * Writing an answer back into the PACS (docs/pacs.md): per call (`send_back=true` on /predict) or per model
 * (PUT /v1/models/{id}/pacs), for a DICOMweb link under the user's PACS root. The prediction is answered first,
 * unchanged; the structured report (and the secondary capture, when the connection asks for one) are then made and
 * sent by STOW-RS in the background, retried, each send in the audit log (pacs_sent / pacs_send_failed).
 */

export interface SendPlan {
  userId: string;
  /** The workspace whose model answered (its experiment's name goes in the report). */
  workspaceId: string;
  experimentId: number;
  target: PacsTarget;
}

/** How a send went: ok when the structured report reached the PACS (the secondary capture is audited on its own). */
export interface SendOutcome {
  ok: boolean;
  /** Why it failed, in English (the audit log's). */
  reason?: string;
  /** The same in catalog words (an auto-score outcome keeps them, so a Spanish page says them in Spanish). */
  text?: Message;
  srUid?: string;
}

/** A UID under 2.25 (a UUID's number) made from `seed`: the same seed, the same UID. */
export function seededUid(seed: string): string {
  const h = createHash("sha256").update(seed).digest();
  h[6] = (h[6] & 0x0f) | 0x80; // version 8 (custom), RFC 9562
  h[8] = (h[8] & 0x3f) | 0x80;
  return `2.25.${BigInt(`0x${h.subarray(0, 16).toString("hex")}`).toString()}`;
}

export interface SendBackDeps {
  connections: PacsConnections;
  guard: OutboundGuard;
  audit: AuditLog;
  logger: Logger;
  attempts: number;
  baseMs: number;
  maxPixels: number;
  /** The experiment's name (its label), or null: the report then names the model "experiment N". */
  modelName: (userId: string, experimentId: number) => Promise<string | null>;
}

export class PacsSendBack {
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly deps: SendBackDeps) {}

  /**
   * Whether this prediction's answer goes back, decided before predicting: `requested` true asks for it and is refused
   * (400 send_back_unavailable, nothing predicted) when it cannot be done; undefined follows the model's setting,
   * which applies to DICOMweb links of the PACS only; false never sends.
   */
  async plan(scope: ServingScope, experimentId: number, message: unknown, requested: boolean | undefined): Promise<SendPlan | null> {
    const userId = scope.userId;
    if (requested === false) return null;
    // /predict's hot path: a data: URI or another link is settled here, without the database or parsing the URI.
    const link = typeof message === "string" && /^https?:\/\//i.test(message) ? dicomWebInstanceUrl(message) : null;
    if (requested === undefined && (!link || !(await this.deps.connections.sendBack(scope.workspace.id, experimentId)))) return null;
    const unavailable = (why: Message) => {
      if (!requested) return null;
      throw new ApiError(400, "send_back_unavailable", msg("pacs.send_back_unavailable", { why }), [detail("send_back", why)]);
    };
    const target = await this.deps.connections.target(userId);
    if (!target) return unavailable(msg("pacs.send_back_no_pacs"));
    if (!link) return unavailable(msg("pacs.send_back_not_dicomweb"));
    if (!underRoot(target.root, message as string)) return unavailable(msg("pacs.send_back_not_under_root", { root: target.root }));
    return { userId, workspaceId: scope.workspace.id, experimentId, target };
  }

  /** Starts the send in the background; a failure is logged and audited, never thrown at the caller. */
  schedule(plan: SendPlan, actor: AuditActor, answer: Record<string, unknown>, source: Buffer, model: LoadedModel): void {
    const job = this.send(plan, actor, answer, source, model).catch((err) =>
      this.deps.logger.error({ err, experiment_id: plan.experimentId }, "sending the answer back to the PACS failed"),
    );
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }

  /**
   * Sends now and says how it went (the auto-scorer, src/pacs/auto-score.ts, which records the outcome with its
   * cursor). `uidSeed` makes the written objects' UIDs a function of it: sent twice, the same SR reaches the PACS,
   * which keeps one (a SOP Instance UID names one object).
   */
  deliver(plan: SendPlan, actor: AuditActor, answer: Record<string, unknown>, source: Buffer, model: LoadedModel, uidSeed: string) {
    return this.send(plan, actor, answer, source, model, uidSeed);
  }

  /** Waits for the sends under way (shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  private async send(
    plan: SendPlan,
    actor: AuditActor,
    answer: Record<string, unknown>,
    bytes: Buffer,
    model: LoadedModel,
    uidSeed?: string,
  ): Promise<SendOutcome> {
    const base = { experiment_id: plan.experimentId, model_version: model.row.version };
    let src: SourceImage;
    try {
      src = readSource(bytes);
    } catch (err) {
      const text = err instanceof SourceError ? err.text : msg("pacs.source_unreadable");
      const reason = say(text, "en");
      await this.deps.audit.record(actor, "pacs_send_failed", `experiment ${plan.experimentId}`, { ...base, object: "sr", reason });
      return { ok: false, reason, text };
    }
    const ids = (kind: string) =>
      uidSeed ? { series: seededUid(`${uidSeed}:${kind}:series`), instance: seededUid(`${uidSeed}:${kind}`) } : undefined;
    const result: SendOutcome = { ok: true };
    const facts = await this.facts(plan, answer, model);
    const objects: Array<[kind: "sr" | "sc", make: () => Promise<WrittenObject>]> = [
      ["sr", async () => structuredReport(src, facts, new Date(), ids("sr"))],
    ];
    if (plan.target.secondaryCapture)
      objects.push([
        "sc",
        () => secondaryCapture(src, bytes, answer, facts, model.manifest, { maxPixels: this.deps.maxPixels, ids: ids("sc") }),
      ]);
    for (const [kind, make] of objects) {
      let obj: WrittenObject;
      try {
        obj = await make();
      } catch (err) {
        this.deps.logger.warn({ err, experiment_id: plan.experimentId }, `the ${kind} could not be made`);
        await this.deps.audit.record(actor, "pacs_send_failed", `experiment ${plan.experimentId}`, {
          ...base,
          object: kind,
          reason: `the ${kind === "sr" ? "structured report" : "secondary capture"} could not be made`,
        });
        if (kind === "sr")
          Object.assign(result, { ok: false, reason: say(msg("pacs.report_not_made"), "en"), text: msg("pacs.report_not_made") });
        continue;
      }
      const outcome = await stow(this.deps.guard, plan.target, src.studyUid, obj.bytes, {
        attempts: this.deps.attempts,
        baseMs: this.deps.baseMs,
      });
      // The audit log holds no patient data: Builder's own new UID, and the source study's only as a hash.
      await this.deps.audit.record(actor, outcome.ok ? "pacs_sent" : "pacs_send_failed", `experiment ${plan.experimentId}`, {
        ...base,
        object: kind,
        sop_instance_uid: obj.sopInstance,
        study_sha256: createHash("sha256").update(src.studyUid).digest("hex").slice(0, 16),
        attempts: outcome.attempts,
        status: outcome.status,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
      });
      if (kind === "sr")
        Object.assign(
          result,
          outcome.ok
            ? { srUid: obj.sopInstance }
            : {
                ok: false,
                reason: outcome.reason ?? `HTTP ${outcome.status}`,
                text: outcome.text ?? msg("pacs.stow_http", { status: outcome.status ?? 0 }),
              },
        );
    }
    return result;
  }

  private async facts(plan: SendPlan, answer: Record<string, unknown>, model: LoadedModel): Promise<AnswerFacts> {
    const m = model.manifest;
    const full = model.row.manifest as Partial<Manifest>;
    const names = classNames(m);
    const classes = Object.keys(names)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => names[k]);
    const facts: AnswerFacts = {
      modelName: (await this.deps.modelName(plan.workspaceId, plan.experimentId)) ?? `experiment ${plan.experimentId}`,
      modelVersion: model.row.version,
      experimentId: plan.experimentId,
      classes,
      caption: plan.target.caption ?? DEFAULT_CAPTION,
    };
    if (m.kind === "detection") {
      const boxes = (answer.boxes as number[][] | undefined) ?? [];
      const scores = (answer.score as number[] | undefined) ?? [];
      const cls = (answer.classification as number[] | undefined) ?? [];
      facts.boxes = boxes.map((box, i) => ({ box, score: scores[i], classIndex: cls[i], className: classes[cls[i]] ?? String(cls[i]) }));
      return facts;
    }
    const scores = answer.score as number[];
    const decided = answer.prediccion as number[];
    facts.scores = scores;
    facts.decided = classes.filter((_, i) => decided[i] === 1);
    facts.thresholds = m.thresholds;
    if (m.problem === "binary") {
      const positive = full.clinical?.positive_class?.index ?? 1;
      facts.positiveClass = classes[positive];
      facts.sensitivity = full.metrics?.test?.sensitivity?.value ?? undefined;
      facts.specificity = full.metrics?.test?.specificity?.value ?? undefined;
    }
    return facts;
  }
}
