import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { experiments } from "../db/schema.js";

type ExperimentRow = typeof experiments.$inferSelect;

// Reads of the experiments table bounded whatever a user's experiments hold (issue 48, finding 3): the chat's, and serving's.
// A table of 260k patients stores every patient id in `experiments.split` and a dataset report of megabytes,
// which the database driver would parse on the event loop (PGlite runs in this very thread) on every message.
// These reads never take `split`, and cut the dataset report in the database to what the chat quotes.

/** The columns of an experiments row the chat quotes. `datasetReport` is the bounded projection below. */
export type BoundedExperiment = Pick<
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
  | "failureText"
  | "createdAt"
  | "finishedAt"
>;

/** Problems listed per list (the rest are counted into errors_omitted / warnings_omitted). */
export const LISTED_PROBLEMS = 10;
/** A label column's class counts are quoted up to this many classes (an identifier as the label has one per row). */
export const MAX_CLASS_COUNTS = 100;

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
  failureText: experiments.failureText,
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

/**
 * The experiments area's bounded reads (the chat's; serving's status and labels), beside ExperimentRepository's full
 * rows. It imports nothing of the area, so the models repository can read through it without a circle.
 */
export class BoundedExperimentReads {
  constructor(private readonly db: Db) {}

  async experiment(workspaceId: string, experimentId: number): Promise<BoundedExperiment | undefined> {
    const rows = await this.db
      .select(experimentColumns)
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows[0];
  }

  /** Whether the user has this experiment: its id only. */
  async hasExperiment(workspaceId: string, experimentId: number): Promise<boolean> {
    const rows = await this.db
      .select({ id: experiments.id })
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows.length > 0;
  }

  /** The user's newest experiments (status filter optional), newest first; the report holds its summary's rows and images only. */
  async experiments(workspaceId: string, opts: { status?: string[]; limit: number }): Promise<BoundedExperiment[]> {
    return this.db
      .select(listColumns)
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), opts.status?.length ? inArray(experiments.status, opts.status) : undefined))
      .orderBy(desc(experiments.createdAt), desc(experiments.experimentId))
      .limit(opts.limit);
  }

  /** The state of one of the user's experiments (queued, running, failed, ...), or null when the user has no such experiment. */
  async status(workspaceId: string, experimentId: number): Promise<string | null> {
    const rows = await this.db
      .select({ status: experiments.status })
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.status ?? null;
  }

  /** An experiment's labels (shown beside its model). */
  async labels(experimentUuid: string): Promise<{ name: string | null; description: string | null }> {
    const rows = await this.db
      .select({ name: experiments.name, description: experiments.description })
      .from(experiments)
      .where(eq(experiments.id, experimentUuid));
    return rows[0] ?? { name: null, description: null };
  }
}
