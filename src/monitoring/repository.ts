import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";

/** One additive aggregate: per model version, hour (epoch ms) and series. */
export interface SeriesRow {
  modelId: string;
  experimentUuid: string;
  hour: number;
  series: string;
  n: number;
  sum: number;
  counts: number[];
}

export interface PredictionRecord {
  modelId: string;
  requestId: string;
  /** Epoch ms. */
  at: number;
  keyId: string | null;
  scores: number[];
  decision: number | null;
}

export interface LabelledRecord {
  requestId: string;
  scores: number[];
  decision: number | null;
  label: number | null;
  at: Date;
}

/** Aggregate rows and outcomes per statement: one JSON parameter each, so the statement's size stays bounded. */
const CHUNK = 5000;
/**
 * Prediction records per INSERT. Each chunk's arrays are built, sent and inserted, then the event loop is yielded
 * (setImmediate) before the next one: on PGlite the SQL runs on this thread, so a chunk is the longest the loop stands
 * still (bench/serve/monitoring-flush.ts).
 */
export const RECORD_CHUNK = 1000;

const rowsOf = <T>(r: unknown) => (r as { rows: T[] }).rows;

/** A macrotask turn, so that requests waiting behind a long flush are answered between its chunks. */
const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One element of a Postgres array literal: quoted, backslash and double quote escaped (request ids come from clients). */
const quoted = (s: string) => `"${s.replace(/[\\"]/g, "\\$&")}"`;
/** A real[] literal element: a score that is not finite is stored as NULL (as the JSON path did). */
const scoreText = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? String(v) : "NULL");

/**
 * One chunk's columns as Postgres array literals (text parameters cast in SQL). Literals rather than driver arrays:
 * node-postgres and PGlite both take a string the same way, drizzle does not expand it into a parameter list, and
 * the server parses a flat literal much faster than jsonb_to_recordset. The scores go as one flat real[] per
 * position (the records of a chunk have as many scores each: one model version, grouped by count), joined back into
 * each row's array in SQL: a text[] of nested literals cast row by row cost the server about a third more per record.
 */
function recordColumns(part: PredictionRecord[], width: number) {
  const ids = new Array<string>(part.length);
  const at = new Array<string>(part.length);
  const keys = new Array<string>(part.length);
  const decisions = new Array<string>(part.length);
  const scores = Array.from({ length: width }, () => new Array<string>(part.length));
  for (let i = 0; i < part.length; i++) {
    const r = part[i];
    ids[i] = quoted(r.requestId);
    at[i] = String(r.at / 1000);
    keys[i] = r.keyId === null ? "NULL" : quoted(r.keyId);
    decisions[i] = r.decision === null ? "NULL" : String(r.decision);
    for (let j = 0; j < width; j++) scores[j][i] = scoreText(r.scores[j]);
  }
  const lit = (xs: string[]) => `{${xs.join(",")}}`;
  return { ids: lit(ids), at: lit(at), keys: lit(keys), decisions: lit(decisions), scores: scores.map(lit) };
}

/** Monitoring's tables (migration 0012): prediction_records and monitoring_aggregates. */
export class MonitoringRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds a flush to the database in one transaction (a retry after a failure never counts a prediction twice; records
   * are idempotent by request id besides): the records a chunk per statement, the event loop yielded between chunks,
   * then the aggregates. One transaction rather than one per chunk: a commit per chunk costs Postgres a WAL flush each.
   * The model versions are resolved once per flush and held (FOR KEY SHARE) until the commit, so a deletion waits for
   * the flush; records and aggregates of a version deleted before are left out, so a flush racing a deletion neither
   * fails nor brings anything back.
   */
  async write(rows: SeriesRow[], records: PredictionRecord[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (records.length) await this.writeRecords(tx, records);
      for (let i = 0; i < rows.length; i += CHUNK) {
        const part = JSON.stringify(rows.slice(i, i + CHUNK).map((r) => ({ ...r, hour: r.hour / 1000 })));
        await tx.execute(sql`
          insert into monitoring_aggregates (model_id, experiment_uuid, hour, series, n, sum, counts)
          select m.id, m.experiment_uuid, to_timestamp(x.hour), x.series, x.n, x.sum,
                 array(select jsonb_array_elements_text(x.counts)::bigint)
          from jsonb_to_recordset(${part}::jsonb) as x("modelId" uuid, hour double precision, series text, n bigint, sum double precision, counts jsonb)
          join models m on m.id = x."modelId"
          on conflict (model_id, hour, series) do update set
            n = monitoring_aggregates.n + excluded.n,
            sum = monitoring_aggregates.sum + excluded.sum,
            counts = (select array_agg(coalesce(a, 0) + coalesce(b, 0) order by i)
                      from unnest(monitoring_aggregates.counts, excluded.counts) with ordinality as t(a, b, i))`);
      }
    });
  }

  private async writeRecords(tx: Pick<Db, "execute">, records: PredictionRecord[]): Promise<void> {
    // Per model version and count of scores (one version always gives as many; the key is safe either way).
    const groups = new Map<string, PredictionRecord[]>();
    for (const r of records) {
      const g = `${r.modelId}|${r.scores.length}`;
      const list = groups.get(g);
      if (list) list.push(r);
      else groups.set(g, [r]);
    }
    const ids = `{${[...new Set(records.map((r) => r.modelId))].map(quoted).join(",")}}`;
    const found = new Map(
      rowsOf<{ id: string; experimentUuid: string }>(
        await tx.execute(sql`select id, experiment_uuid as "experimentUuid" from models where id = any(${ids}::uuid[]) for key share`),
      ).map((m) => [m.id, m.experimentUuid]),
    );
    for (const list of groups.values()) {
      const modelId = list[0].modelId;
      const experimentUuid = found.get(modelId);
      if (experimentUuid === undefined) continue; // deleted before this flush: its records go with it
      const width = list[0].scores.length;
      const s = Array.from({ length: width }, (_, j) => sql.raw(`s${j}`));
      const scores = width ? sql`array[${sql.join(s, sql`, `)}]::real[]` : sql`'{}'::real[]`;
      const columns = sql.join([sql`request_id`, sql`at`, sql`key_id`, sql`decision`, ...s], sql`, `);
      for (let i = 0; i < list.length; i += RECORD_CHUNK) {
        const c = recordColumns(list.slice(i, i + RECORD_CHUNK), width);
        const arrays = sql.join(
          [
            sql`${c.ids}::text[]`,
            sql`${c.at}::float8[]`,
            sql`${c.keys}::uuid[]`,
            sql`${c.decisions}::int[]`,
            ...c.scores.map((a) => sql`${a}::real[]`),
          ],
          sql`, `,
        );
        await tx.execute(sql`
          insert into prediction_records (experiment_uuid, request_id, model_id, at, key_id, scores, decision)
          select ${experimentUuid}::uuid, x.request_id, ${modelId}::uuid, to_timestamp(x.at), x.key_id, ${scores}, x.decision
          from unnest(${arrays}) as x(${columns})
          on conflict do nothing`);
        await yieldLoop();
      }
    }
  }

  /**
   * Deletes records older than the retention (PREDICTION_RETENTION_DAYS), and aggregates as old; returns how many
   * records went. Experiment by experiment through the (experiment, at) index: a separate index on `at` alone would
   * cost every inserted record one more index entry on /predict's path for a query run once a day (issue 49 item 8).
   * Every record has an experiment: its model's row cascades from it.
   */
  async purge(before: Date): Promise<number> {
    const r = await this.db.execute(
      sql`with gone as (
            delete from prediction_records p using experiments e
            where p.experiment_uuid = e.id and p.at < ${before.toISOString()}::timestamptz returning 1)
          select count(*)::int as n from gone`,
    );
    await this.db.execute(sql`delete from monitoring_aggregates where hour < ${before.toISOString()}::timestamptz`);
    return rowsOf<{ n: number }>(r)[0]?.n ?? 0;
  }

  /** An experiment's aggregates in [from, to), every version, summed per hour and series (the versions apart). */
  async aggregates(experimentUuid: string, from: Date, to: Date): Promise<Array<SeriesRow & { version: number }>> {
    const r = await this.db.execute(sql`
      select a.model_id as "modelId", m.version, extract(epoch from a.hour) * 1000 as hour, a.series, a.n::float8 as n, a.sum,
             array(select v::float8 from unnest(a.counts) v) as counts
      from monitoring_aggregates a join models m on m.id = a.model_id
      where a.experiment_uuid = ${experimentUuid} and a.hour >= ${from.toISOString()}::timestamptz and a.hour < ${to.toISOString()}::timestamptz
      order by a.hour`);
    return rowsOf<SeriesRow & { version: number }>(r).map((x) => ({ ...x, hour: Number(x.hour), experimentUuid }));
  }

  /** Records in [from, to) of the experiment: labelled ones with their label, the others for the estimate. */
  async records(experimentUuid: string, from: Date, to: Date, limit: number): Promise<LabelledRecord[]> {
    const r = await this.db.execute(sql`
      select request_id as "requestId", array(select v::float8 from unnest(scores) v) as scores, decision, label, at
      from prediction_records
      where experiment_uuid = ${experimentUuid} and at >= ${from.toISOString()}::timestamptz and at < ${to.toISOString()}::timestamptz
      order by at desc limit ${limit}`);
    return rowsOf<LabelledRecord>(r);
  }

  /** Sets the outcome of the experiment's records by request id (the same label again changes nothing); returns the ids found. */
  async label(experimentUuid: string, outcomes: Array<{ requestId: string; label: number }>): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < outcomes.length; i += CHUNK) {
      const part = JSON.stringify(outcomes.slice(i, i + CHUNK));
      const r = await this.db.execute(sql`
        update prediction_records p set label = x.label, label_at = case when p.label is distinct from x.label then now() else p.label_at end
        from jsonb_to_recordset(${part}::jsonb) as x("requestId" text, label integer)
        where p.experiment_uuid = ${experimentUuid} and p.request_id = x."requestId"
        returning p.request_id as "requestId"`);
      for (const row of rowsOf<{ requestId: string }>(r)) found.add(row.requestId);
    }
    return found;
  }
}
