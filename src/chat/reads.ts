import type { Db } from "../db/client.js";
import { BoundedExperimentReads, type BoundedExperiment } from "../experiments/bounded-reads.repository.js";
import { ModelRepository, type ModelRow } from "../serving/model-repository.js";

export { LISTED_PROBLEMS, MAX_CLASS_COUNTS } from "../experiments/bounded-reads.repository.js";

// What the chat reads about a user's experiments and models, bounded whatever their size (issue 48, finding 3).
// A table of 260k patients stores every patient id in `experiments.split` and, for an identifier-like column, every
// value in its model's manifest (`input.columns[].codes`): megabytes that the database driver parsed on the event
// loop on every message (PGlite runs in this very thread), 0.1-0.45 s for every tenant. The chat needs none of it:
// it never reads `split`, reads the dataset report cut to what it quotes, and reads a model's manifest with each
// column's codes replaced by their count, once per model version (a models row never changes its manifest).

/** The columns of an experiments row the chat quotes; its dataset report is cut to what the chat quotes. */
export type ChatExperiment = BoundedExperiment;

/** A models row as the chat reads it: `manifest` without codes, and how many each categorical column had. */
export type ChatModel = Pick<ModelRow, "id" | "experimentId" | "version" | "kind" | "createdAt" | "manifest"> & {
  /** Column name -> how many values it codes (what the chat says instead of the values). */
  categories: Record<string, number>;
};

interface ChatManifest {
  manifest: unknown;
  categories: Record<string, number>;
}

/** Model versions whose chat manifest is kept. */
const MANIFEST_CACHE = 512;

/** The chat's reads, one per process: bounded per message whatever the user's experiments hold. */
export class ChatReads {
  private readonly manifests = new Map<string, ChatManifest>();

  private readonly experimentReads: BoundedExperimentReads;
  private readonly models: ModelRepository;

  constructor(db: Db) {
    this.experimentReads = new BoundedExperimentReads(db);
    this.models = new ModelRepository(db);
  }

  experiment(workspaceId: string, experimentId: number): Promise<ChatExperiment | undefined> {
    return this.experimentReads.experiment(workspaceId, experimentId);
  }

  /** Whether the user has this experiment: its id only. */
  hasExperiment(workspaceId: string, experimentId: number): Promise<boolean> {
    return this.experimentReads.hasExperiment(workspaceId, experimentId);
  }

  /** The user's newest experiments (status filter optional), newest first; the report holds its summary's rows and images only. */
  experiments(workspaceId: string, opts: { status?: string[]; limit: number }): Promise<ChatExperiment[]> {
    return this.experimentReads.experiments(workspaceId, opts);
  }

  /**
   * The served (latest) version of the user's experiment, as ModelRepository.latest picks it, with its manifest
   * without codes. The version is looked up every time (a rollback changes it); its manifest is read once.
   */
  async latestModel(workspaceId: string, experimentId: number): Promise<ChatModel | null> {
    const row = await this.models.latestHead(workspaceId, experimentId);
    if (!row) return null;
    const m = await this.manifest(row.id);
    return m ? { ...row, ...m } : null;
  }

  private async manifest(modelId: string): Promise<ChatManifest | null> {
    if (this.manifests.has(modelId)) {
      const hit = this.manifests.get(modelId);
      // Most recently used last: the oldest entry is the first a full cache drops.
      this.manifests.delete(modelId);
      this.manifests.set(modelId, hit!);
      return hit!;
    }
    const row = await this.models.manifestWithoutCodes(modelId);
    if (!row) return null;
    const entry = { manifest: row.manifest, categories: row.categories ?? {} };
    this.manifests.set(modelId, entry);
    if (this.manifests.size > MANIFEST_CACHE) this.manifests.delete(this.manifests.keys().next().value!);
    return entry;
  }
}
