import { randomUUID } from "node:crypto";
import type { AuditLog } from "../audit/audit-log.js";
import type { Db } from "../db/client.js";
import { ApiError, msg, detail, messageFromStore, say, storedMessage, textOfError, type Message } from "../errors.js";
import type { Language } from "../i18n/index.js";
import type { Logger } from "../logger.js";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { JsonBytes } from "../serving/json-encode.js";
import type { Serving } from "../serving/index.js";
import { AutoScoreRepository, type NewScoredRow, type RuleRow } from "./auto-score.repository.js";
import type { PacsConnections, PacsTarget } from "./connection.js";
import type { PacsRepository } from "./repository.js";
import type { PacsSendBack } from "./send-back.js";
import { workspaceNotFound } from "../workspaces/scope.js";

/**
 * Scoring new studies as they arrive (docs/pacs.md, "Scoring new studies"). A model's rule (modality, body part,
 * series description) on the user's PACS; a poller follows the PACS's change feed and scores each new instance that
 * matches, writing the SR (and the capture) back with the send-back's STOW-RS.
 *
 * DICOMweb has no change feed, so the feed is Orthanc's REST `/changes?since=N` (the REST root is the DICOMweb root's
 * parent, e.g. http://pacs:8042 for http://pacs:8042/dicom-web); a PACS that is not Orthanc is refused by name.
 *
 * Neither lost nor repeated across a kill: the cursor (the last change handled) and each instance's outcome are written
 * in one transaction after the send. A kill before it re-reads the change and sends again, with the same UIDs (seeded
 * by user, model, version and source instance), so the PACS keeps one SR; an outcome already written is skipped.
 * One process follows a user's feed at a time: a lease on the cursor row, renewed each tick, taken over when it lapses.
 */

export interface AutoScoreRule {
  enabled: boolean;
  modality: string | null;
  body_part: string | null;
  series_description: string | null;
}

export interface AutoScoreDeps {
  db: Db;
  repo: PacsRepository;
  connections: PacsConnections;
  sendBack: PacsSendBack;
  serving: () => Serving;
  guard: () => OutboundGuard;
  audit: AuditLog;
  logger: Logger;
  /** How long a lease lasts without renewal: another replica takes the feed over after it. */
  leaseMs: number;
}

type Change = { ChangeType: string; ID: string; Seq: number };

/** Orthanc's REST root for a DICOMweb root: its parent path (Orthanc serves DICOMweb under /dicom-web by default). */
export function orthancRestRoot(dicomWebRoot: string): string {
  const url = new URL(dicomWebRoot);
  url.pathname = url.pathname.split("/").slice(0, -1).join("/");
  return url.toString().replace(/\/$/, "");
}

/** Whether a tag's value meets a rule's field: null matches anything; otherwise equal, ignoring case and padding. */
function meets(want: string | null, have: string | undefined): boolean {
  return want === null || (have ?? "").trim().toLowerCase() === want.trim().toLowerCase();
}

/** Why an outcome failed, in `lang`: its catalog words when it kept them, else its English. */
function reasonIn(row: { reason: string | null; reasonText: unknown }, lang: Language): string | null {
  const text = messageFromStore(row.reasonText);
  return text ? say(text, lang) : row.reason;
}

export class PacsAutoScore {
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  private readonly store: AutoScoreRepository;

  constructor(private readonly deps: AutoScoreDeps) {
    this.store = new AutoScoreRepository(deps.db);
  }

  /** The user's personal workspace's id: the PACS and its rules are the user's own (PacsRepository.personalWorkspace). */
  private async personal(userId: string) {
    const workspace = await this.deps.repo.personalWorkspace(userId);
    if (!workspace) throw workspaceNotFound();
    return workspace;
  }

  async getRule(userId: string, experimentId: number): Promise<AutoScoreRule> {
    if ((await this.deps.repo.sendBack((await this.personal(userId)).id, experimentId)) === null) throw notFound(experimentId);
    const r = await this.store.rule(userId, experimentId);
    return r ? view(r) : { enabled: false, modality: null, body_part: null, series_description: null };
  }

  /**
   * Saves a model's rule. Turning it on starts the user's feed at the PACS's newest change when no cursor exists yet:
   * what is stored from now on is scored, not the PACS's history. Refused when the PACS cannot give its feed.
   */
  async setRule(userId: string, experimentId: number, rule: AutoScoreRule): Promise<AutoScoreRule> {
    if ((await this.deps.repo.sendBack((await this.personal(userId)).id, experimentId)) === null) throw notFound(experimentId);
    const clean = (s: string | null) => s?.trim() || null;
    const row = {
      userId,
      experimentId,
      enabled: rule.enabled,
      modality: clean(rule.modality),
      bodyPart: clean(rule.body_part),
      seriesDescription: clean(rule.series_description),
    };
    if (rule.enabled) {
      const target = await this.deps.connections.target(userId);
      if (!target) throw unavailable(msg("pacs.auto_score_no_pacs"));
      const last = await this.lastChange(target);
      await this.store.startCursor(userId, last);
    }
    return view(await this.store.saveRule(row));
  }

  /** The last outcomes of a model's rule, newest first (failures are shown on the dashboard with their reason). */
  async outcomes(userId: string, experimentId: number, limit = 50, lang: Language = "en") {
    const rows = await this.store.outcomes(userId, experimentId, limit);
    return rows.map((r) => ({
      sop_instance_uid: r.sopInstanceUid,
      outcome: r.outcome as "sent" | "failed",
      // In the reader's language when the outcome kept its catalog words; an older row has only its English.
      reason: reasonIn(r, lang),
      sr_instance_uid: r.srInstanceUid,
      at: r.at.toISOString(),
    }));
  }

  /** Polls every `intervalMs` until stop(); a tick's failure is logged and the next tick tries again. */
  start(intervalMs: number): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((err) => this.deps.logger.error({ err }, "scoring new PACS instances failed; trying again next tick"))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(loop, intervalMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    // Leave the feeds at once for another replica rather than at the lease's end.
    await this.store.releaseLeases(this.owner);
  }

  /** One pass: every user with a rule on, whose feed this process holds or can take, read to its end. */
  async tick(): Promise<void> {
    const users = await this.store.usersWithRuleOn();
    for (const { userId } of users) {
      if (this.stopped) return;
      const cursor = await this.claim(userId);
      if (cursor === null) continue;
      try {
        await this.follow(userId, cursor);
      } catch (err) {
        this.deps.logger.warn({ err, user_id: userId }, "the PACS feed could not be read; trying again next tick");
      }
    }
  }

  /** Takes or renews the lease on the user's feed; its cursor, or null when another process holds it. */
  private async claim(userId: string): Promise<number | null> {
    return this.store.claim(userId, this.owner, this.deps.leaseMs);
  }

  private async follow(userId: string, since: number): Promise<void> {
    const target = await this.deps.connections.target(userId);
    if (!target) return;
    const rest = orthancRestRoot(target.root);
    for (;;) {
      const page = (await this.getJson(target, `${rest}/changes?since=${since}&limit=100`)) as {
        Changes: Change[];
        Done: boolean;
        Last: number;
      };
      for (const change of page.Changes) {
        if (this.stopped) return;
        const rows = change.ChangeType === "NewInstance" ? await this.score(userId, target, rest, change.ID) : [];
        if (!(await this.commit(userId, change.Seq, rows))) return; // the lease was lost: another process goes on
        since = change.Seq;
      }
      if (page.Done || page.Changes.length === 0) {
        if (page.Last > since) await this.commit(userId, page.Last, []);
        return;
      }
    }
  }

  /** The instance scored by each enabled rule it meets; an outcome already written (before a kill) is not redone. */
  private async score(userId: string, target: PacsTarget, rest: string, orthancId: string) {
    const tags = (await this.getJson(target, `${rest}/instances/${encodeURIComponent(orthancId)}/simplified-tags`)) as Record<
      string,
      string | undefined
    >;
    // Builder's own answers arrive on the feed too: never scored.
    if ((tags.Manufacturer ?? "").trim() === "Builder") return [];
    const rules = await this.store.enabledRules(userId);
    const sop = tags.SOPInstanceUID ?? "";
    const out: NewScoredRow[] = [];
    for (const rule of rules) {
      if (!meets(rule.modality, tags.Modality) || !meets(rule.bodyPart, tags.BodyPartExamined)) continue;
      if (!meets(rule.seriesDescription, tags.SeriesDescription)) continue;
      if (await this.store.scored(userId, rule.experimentId, sop)) continue;
      const url = `${target.root}/studies/${tags.StudyInstanceUID}/series/${tags.SeriesInstanceUID}/instances/${sop}`;
      out.push({ userId, experimentId: rule.experimentId, sopInstanceUid: sop, ...(await this.scoreOne(userId, rule, target, url, sop)) });
    }
    return out;
  }

  private async scoreOne(userId: string, rule: RuleRow, target: PacsTarget, url: string, sop: string) {
    const actor = { userId, via: "system" as const };
    const serving = this.deps.serving();
    try {
      let source: Buffer | undefined;
      const scope = { userId, workspace: await this.personal(userId) };
      const body = await serving.predict(scope, rule.experimentId, url, { onSource: (b) => (source = b) });
      const answer = (body instanceof JsonBytes ? body.toJSON() : body) as Record<string, unknown>;
      const model = await serving.model(scope, rule.experimentId);
      const plan = { userId, workspaceId: scope.workspace.id, experimentId: rule.experimentId, target };
      const seed = `auto-score:${userId}:${rule.experimentId}:${model.row.version}:${sop}`;
      const sent = await this.deps.sendBack.deliver(plan, actor, answer, source!, model, seed);
      if (sent.ok) return { outcome: "sent", reason: null, reasonText: null, srInstanceUid: sent.srUid ?? null };
      const text = sent.text ?? msg("pacs.report_not_sent");
      return { outcome: "failed", reason: sent.reason ?? say(text, "en"), reasonText: storedMessage(text), srInstanceUid: null };
    } catch (err) {
      // A prediction that failed is written down like a failed send: on the dashboard and in the audit log.
      const text = msg("pacs.prediction_failed", { why: textOfError(err) ?? (err instanceof Error ? err.message : String(err)) });
      const reason = say(text, "en");
      await this.deps.audit.record(actor, "pacs_send_failed", `experiment ${rule.experimentId}`, {
        experiment_id: rule.experimentId,
        object: "sr",
        auto_score: true,
        reason,
      });
      return { outcome: "failed", reason, reasonText: storedMessage(text), srInstanceUid: null };
    }
  }

  /** The outcomes and the cursor, in one transaction, while this process still holds the lease. */
  private commit(userId: string, seq: number, rows: NewScoredRow[]): Promise<boolean> {
    return this.store.commit(userId, this.owner, seq, rows);
  }

  private async lastChange(target: PacsTarget): Promise<number> {
    const body = (await this.getJson(target, `${orthancRestRoot(target.root)}/changes?last`).catch((err: unknown) => {
      throw unavailable(msg("pacs.no_change_feed", { why: err instanceof Error ? err.message : String(err) }));
    })) as { Last?: unknown };
    if (typeof body.Last !== "number") throw unavailable(msg("pacs.changes_not_orthanc"));
    return body.Last;
  }

  private async getJson(target: PacsTarget, url: string): Promise<unknown> {
    const res = await this.deps.guard().fetch(url, {
      headers: { accept: "application/json", ...(target.authorization ? { authorization: target.authorization } : {}) },
      maxRedirects: 0,
      maxBytes: 4 * 1024 * 1024,
    });
    if (res.status !== 200) throw new Error(`${new URL(url).pathname} answered HTTP ${res.status}`);
    return JSON.parse(res.body.toString("utf8"));
  }
}

function view(r: RuleRow): AutoScoreRule {
  return { enabled: r.enabled, modality: r.modality, body_part: r.bodyPart, series_description: r.seriesDescription };
}

function notFound(experimentId: number) {
  return new ApiError(404, "not_found", msg("experiment.not_found", { id: experimentId }));
}

function unavailable(why: Message) {
  return new ApiError(409, "pacs_auto_score_unavailable", msg("pacs.auto_score_unavailable", { why }), [detail("enabled", why)]);
}
