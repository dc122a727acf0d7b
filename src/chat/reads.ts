import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { experiments, models } from "../db/schema.js";
import type { ExperimentRow } from "../experiments/repository.js";
import type { ModelRow } from "../serving/model-repository.js";

// What the chat reads about a user's experiments and models, bounded whatever their size (issue 48, finding 3).
// A table of 260k patients stores every patient id in `experiments.split` and, for an identifier-like column, every
// value in its model's manifest (`input.columns[].codes`): megabytes that the database driver parsed on the event
// loop on every message (PGlite runs in this very thread), 0.1-0.45 s for every tenant. The chat needs none of it:
// it never reads `split`, reads the dataset report cut to what it quotes, and reads a model's manifest with each
// column's codes replaced by their count, once per model version (a models row never changes its manifest).

/** The columns of an experiments row the chat quotes. `datasetReport` is the bounded projection below. */
export type ChatExperiment = Pick<
  ExperimentRow,
  | "id"
  | "experimentId"
  | "name"
  | "description"
  | "request"
  | "status"
  | "progress"
  | "history"
  | "datasetReport"
  | "metrics"
  | "originalMetrics"
  | "failureReason"
  | "createdAt"
  | "finishedAt"
>;

/** A models row as the chat reads it: `manifest` without codes, and how many each categorical column had. */
export type ChatModel = Pick<ModelRow, "id" | "experimentId" | "version" | "kind" | "createdAt" | "manifest"> & {
  /** Column name -> how many values it codes (what the chat says instead of the values). */
  categories: Record<string, number>;
};

interface ChatManifest {
  manifest: unknown;
  categories: Record<string, number>;
}

/** Problems listed per list (the rest are counted into errors_omitted / warnings_omitted). */
export const LISTED_PROBLEMS = 10;
/** A label column's class counts are quoted up to this many classes (an identifier as the label has one per row). */
export const MAX_CLASS_COUNTS = 100;
/** Model versions whose chat manifest is kept. */
const MANIFEST_CACHE = 512;

const isArray = (v: SQL) => sql`jsonb_typeof(${v}) = 'array'`;
const firstOf = (list: SQL) =>
  sql`case when ${isArray(list)} then jsonb_path_query_array(${list}, '$[0 to ${sql.raw(String(LISTED_PROBLEMS - 1))}]') else '[]'::jsonb end`;
const omitted = (list: SQL, counted: SQL) =>
  sql`(case when jsonb_typeof(${counted}) = 'number' then (${counted})::text::numeric else 0 end
       + case when ${isArray(list)} then greatest(jsonb_array_length(${list}) - ${sql.raw(String(LISTED_PROBLEMS))}, 0) else 0 end)`;

/**
 * The dataset report as the chat quotes it: valid, the first LISTED_PROBLEMS errors and warnings with the rest
 * counted, and the summary's counts; never the thumbnails, the per-feature list or a label's thousands of classes.
 * Cut in the database, so only this much crosses to the driver.
 */
const report = (() => {
  const r = sql`${experiments.datasetReport}`;
  const s = sql`(${r} -> 'summary')`;
  const cc = sql`(${s} -> 'class_counts')`;
  return sql<unknown>`case when jsonb_typeof(${r}) = 'object' then jsonb_build_object(
    'valid', ${r} -> 'valid',
    'errors', ${firstOf(sql`(${r} -> 'errors')`)},
    'warnings', ${firstOf(sql`(${r} -> 'warnings')`)},
    'errors_omitted', ${omitted(sql`(${r} -> 'errors')`, sql`(${r} -> 'errors_omitted')`)},
    'warnings_omitted', ${omitted(sql`(${r} -> 'warnings')`, sql`(${r} -> 'warnings_omitted')`)},
    'summary', jsonb_strip_nulls(jsonb_build_object(
      'rows', ${s} -> 'rows', 'patients', ${s} -> 'patients', 'images', ${s} -> 'images', 'boxes', ${s} -> 'boxes',
      'split', ${s} -> 'split', 'problem_counts', ${s} -> 'problem_counts',
      'class_counts', case when jsonb_typeof(${cc}) = 'object' then
        (select jsonb_object_agg(k, v) from jsonb_each(${cc}) as e(k, v)
          where jsonb_typeof(v) = 'object' and (select count(*) from jsonb_object_keys(v)) <= ${sql.raw(String(MAX_CLASS_COUNTS))}) end
    ))
  ) end`;
})();

const experimentColumns = {
  id: experiments.id,
  experimentId: experiments.experimentId,
  name: experiments.name,
  description: experiments.description,
  request: experiments.request,
  status: experiments.status,
  progress: experiments.progress,
  history: experiments.history,
  datasetReport: report.as("dataset_report"),
  metrics: experiments.metrics,
  originalMetrics: experiments.originalMetrics,
  failureReason: experiments.failureReason,
  createdAt: experiments.createdAt,
  finishedAt: experiments.finishedAt,
};

/** For lists: the report's two sizes only (build_times quotes them), nothing a large dataset makes larger. */
const listColumns = {
  ...experimentColumns,
  datasetReport: sql<unknown>`case when jsonb_typeof(${experiments.datasetReport}) = 'object' then jsonb_build_object('summary',
    jsonb_strip_nulls(jsonb_build_object('rows', ${experiments.datasetReport} -> 'summary' -> 'rows',
      'images', ${experiments.datasetReport} -> 'summary' -> 'images'))) end`.as("dataset_report"),
};

const columnsOf = sql`(${models.manifest} -> 'input' -> 'columns')`;

/** The manifest without its columns' `codes` (the served manifest's schema allows no count in their place). */
const manifestWithoutCodes = sql<unknown>`case when jsonb_typeof(${columnsOf}) = 'array' then jsonb_set(${models.manifest}, '{input,columns}',
  coalesce((select jsonb_agg(c - 'codes' order by n) from jsonb_array_elements(${columnsOf}) with ordinality as t(c, n)), '[]'::jsonb))
  else ${models.manifest} end`;

/** Per categorical column with codes, how many: counted in the database. */
const codeCounts = sql<Record<string, number> | null>`case when jsonb_typeof(${columnsOf}) = 'array' then
  (select jsonb_object_agg(c ->> 'name', (select count(*) from jsonb_object_keys(c -> 'codes')))
    from jsonb_array_elements(${columnsOf}) as t(c) where jsonb_typeof(c -> 'codes') = 'object') end`;

/** The chat's reads, one per process: bounded per message whatever the user's experiments hold. */
export class ChatReads {
  private readonly manifests = new Map<string, ChatManifest>();

  constructor(private readonly db: Db) {}

  async experiment(userId: string, experimentId: number): Promise<ChatExperiment | undefined> {
    const rows = await this.db
      .select(experimentColumns)
      .from(experiments)
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)));
    return rows[0];
  }

  /** Whether the user has this experiment: its id only. */
  async hasExperiment(userId: string, experimentId: number): Promise<boolean> {
    const rows = await this.db
      .select({ id: experiments.id })
      .from(experiments)
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)));
    return rows.length > 0;
  }

  /** The user's newest experiments (status filter optional), newest first; the report holds its summary's rows and images only. */
  async experiments(userId: string, opts: { status?: string[]; limit: number }): Promise<ChatExperiment[]> {
    return this.db
      .select(listColumns)
      .from(experiments)
      .where(and(eq(experiments.userId, userId), opts.status?.length ? inArray(experiments.status, opts.status) : undefined))
      .orderBy(desc(experiments.createdAt), desc(experiments.experimentId))
      .limit(opts.limit);
  }

  /**
   * The served (latest) version of the user's experiment, as ModelRepository.latest picks it, with its manifest
   * without codes. The version is looked up every time (a rollback changes it); its manifest is read once.
   */
  async latestModel(userId: string, experimentId: number): Promise<ChatModel | null> {
    const [row] = await this.db
      .select({ id: models.id, experimentId: models.experimentId, version: models.version, kind: models.kind, createdAt: models.createdAt })
      .from(models)
      .where(and(eq(models.userId, userId), eq(models.experimentId, experimentId)))
      .orderBy(desc(models.madeCurrentAt), desc(models.version))
      .limit(1);
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
    const [row] = await this.db
      .select({ manifest: manifestWithoutCodes, categories: codeCounts })
      .from(models)
      .where(eq(models.id, modelId));
    if (!row) return null;
    const entry = { manifest: row.manifest, categories: row.categories ?? {} };
    this.manifests.set(modelId, entry);
    if (this.manifests.size > MANIFEST_CACHE) this.manifests.delete(this.manifests.keys().next().value!);
    return entry;
  }
}
