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

/** Records per INSERT: one JSON parameter each, so the statement's size stays bounded. */
const CHUNK = 5000;

const rowsOf = <T>(r: unknown) => (r as { rows: T[] }).rows;

/** Monitoring's tables (migration 0012): prediction_records and monitoring_aggregates. */
export class MonitoringRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds a flush to the database in one transaction. Rows of a model version deleted meanwhile are left out (the
   * join on models), so a flush racing a deletion neither fails nor brings anything back.
   */
  async write(rows: SeriesRow[], records: PredictionRecord[]): Promise<void> {
    await this.db.transaction(async (tx) => {
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
      for (let i = 0; i < records.length; i += CHUNK) {
        const part = JSON.stringify(records.slice(i, i + CHUNK).map((r) => ({ ...r, at: r.at / 1000 })));
        await tx.execute(sql`
          insert into prediction_records (experiment_uuid, request_id, model_id, at, key_id, scores, decision)
          select m.experiment_uuid, x."requestId", m.id, to_timestamp(x.at), x."keyId",
                 array(select jsonb_array_elements_text(x.scores)::real), x.decision
          from jsonb_to_recordset(${part}::jsonb) as x("modelId" uuid, "requestId" text, at double precision, "keyId" uuid, scores jsonb, decision integer)
          join models m on m.id = x."modelId"
          on conflict do nothing`);
      }
    });
  }

  /** Deletes records older than the retention (PREDICTION_RETENTION_DAYS), and aggregates as old; returns how many records went. */
  async purge(before: Date): Promise<number> {
    const r = await this.db.execute(
      sql`with gone as (delete from prediction_records where at < ${before.toISOString()}::timestamptz returning 1) select count(*)::int as n from gone`,
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
