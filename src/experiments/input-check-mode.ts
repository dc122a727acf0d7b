import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { Manifest } from "../contract/types.js";
import { ApiError, errors, msg } from "../errors.js";
import type { ExperimentRepository, ModelRow } from "./repository.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/**
 * The per-model setting of the unfamiliar-input check (docs/monitoring.md#unfamiliar-inputs): `flag` (answer, and say
 * so in x-input-check) or `refuse` (422 unfamiliar_input). Changing it publishes a new model version on the same
 * files with the manifest's input_check.mode changed, as saving an operating point does: /predict switches at once on
 * every replica (the models table's notification), the change is in the experiment's history and the audit log, and
 * rolling back to the previous version undoes it. A model built before the check has nothing to set (409).
 */

export type InputCheckMode = "flag" | "refuse";

export class InputCheckModeService {
  constructor(
    private readonly deps: {
      repo: ExperimentRepository;
      audit: AuditLog;
      /** Serving's cache: the replica that changed it switches before it answers (the others by notification). */
      warm: (row: ModelRow) => Promise<void>;
    },
  ) {}

  private async current(scope: Scope, experimentId: number): Promise<{ model: ModelRow; manifest: Manifest }> {
    assertAllowed(scope.workspace, "experiment.read");
    const row = await this.deps.repo.byNumber(scope.workspace.id, experimentId);
    if (!row) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    const model = await this.deps.repo.currentModel(scope.workspace.id, experimentId);
    if (!model || model.experimentUuid !== row.id) {
      throw new ApiError(409, "model_not_published", msg("experiment.no_published_model", { id: experimentId, status: row.status }));
    }
    return { model, manifest: model.manifest as Manifest };
  }

  /** GET: the current version's setting and what it checks; `available: false` for a model built before the check. */
  async get(scope: Scope, experimentId: number) {
    const { model, manifest } = await this.current(scope, experimentId);
    const check = manifest.input_check;
    return {
      experiment_id: experimentId,
      version: model.version,
      available: !!check,
      mode: check?.mode ?? null,
      checks: check ? (check.image ? "image" : check.table ? "table" : null) : null,
      test_flagged_rate: ((check?.image ?? check?.table)?.test_flagged_rate as number | undefined) ?? null,
    };
  }

  /** PUT: a new current version with the mode set (none when it already has that mode: the answer says so). */
  async set(scope: Scope, experimentId: number, mode: InputCheckMode, actor: AuditActor) {
    const { model, manifest } = await this.current(scope, experimentId);
    // A new version, as an operating point is: the same permission.
    assertAllowed(scope.workspace, "operating_point.set");
    if (!manifest.input_check) {
      throw new ApiError(409, "no_input_check", msg("experiment.no_input_check"));
    }
    if (manifest.input_check.mode === mode) return { status: 200 as const, body: await this.get(scope, experimentId) };
    const next: Manifest = { ...manifest, input_check: { ...manifest.input_check, mode } };
    const row = await this.deps.repo.publishVersion(model, next, { event: "input_check_mode_changed", metrics: manifest.metrics.test });
    await this.deps.warm(row);
    await this.deps.audit.record(actor, "input_check_mode_changed", `experiment ${experimentId}`, {
      version: row.version,
      from_version: model.version,
      mode,
    });
    return { status: 201 as const, body: await this.get(scope, experimentId) };
  }
}
