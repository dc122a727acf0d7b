import fs from "node:fs";

// "Erased" must mean unreadable on disk. Postgres (and PGlite, which is Postgres) deletes a row by marking it dead:
// its bytes stay in the table's pages, its indexes and its TOAST table until the page is reused, and in the WAL
// segment that recorded its insert. After an account's erasure the tables it touched are therefore compacted:
//
// - PGlite (the embedded default, one process owns the folder): VACUUM FULL rewrites each table, its indexes and its
//   TOAST into new files and deletes the old ones; pg_statistic too (ANALYZE may have kept sample values). Then
//   pg_switch_wal() and CHECKPOINT: the segments holding the old inserts are behind the checkpoint and, with
//   wal_recycle off (client.ts), deleted. VACUUM FULL locks each table while it runs: on the embedded database
//   queries wait their turn anyway, and its tables are small.
// - Postgres: plain VACUUM (no lock that stops the service): dead rows are pruned and their space reused, but the
//   bytes may stay on a page until it is overwritten, and the WAL, archived WAL, replicas and backups keep their
//   copies (docs/operations.md#data-protection says what the operator must do about those).
//
// The audit log is left alone: append-only, nothing is ever deleted from it, and it holds no patient data.

export interface CompactionResult {
  kind: "pglite" | "postgres";
  tables: string[];
  /** What was run, for the log. */
  statement: string;
}

type Query = (text: string) => Promise<Array<Record<string, unknown>>>;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The tables an erasure deletes from: every table of the schema but the append-only audit log and the migrations. */
async function touchedTables(query: Query): Promise<string[]> {
  const rows = await query(
    "select tablename from pg_tables where schemaname = 'public' and tablename <> 'audit_events' order by tablename",
  );
  return rows.map((r) => String(r.tablename));
}

export function compactionOf(o: { kind: "pglite" | "postgres"; query: Query; dueFile?: string }) {
  const compact = async (): Promise<CompactionResult> => {
    const tables = await touchedTables(o.query);
    const list = tables.map(quote).join(", ");
    let statement: string;
    if (o.kind === "pglite") {
      statement = `vacuum full ${list}, pg_catalog.pg_statistic; select pg_switch_wal(); checkpoint`;
      await o.query(`vacuum full ${list}, pg_catalog.pg_statistic`);
      await o.query("select pg_switch_wal()");
      await o.query("checkpoint");
    } else {
      statement = `vacuum ${list}`;
      await o.query(statement);
    }
    if (o.dueFile) await fs.promises.rm(o.dueFile, { force: true });
    return { kind: o.kind, tables, statement };
  };
  return {
    markCompactionDue: async () => {
      if (o.dueFile) await fs.promises.writeFile(o.dueFile, `${new Date().toISOString()}\n`);
    },
    compact,
    compactIfDue: async () => (o.dueFile && fs.existsSync(o.dueFile) ? compact() : null),
  };
}
