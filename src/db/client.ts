import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { compactionOf, type CompactionResult } from "./compaction.js";
import * as schema from "./schema.js";

export type { CompactionResult };
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: "pglite" | "postgres";
  /** Applies the committed migrations (idempotent). */
  migrate(): Promise<void>;
  /** True when a trivial query answers. */
  ping(): Promise<boolean>;
  /**
   * LISTENs on a channel. onState(true) once listening (again, after a reconnect), onState(false) when
   * notifications may be missed (the connection dropped). Returns a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onState: (listening: boolean) => void): Promise<() => Promise<void>>;
  /**
   * After an erasure: deleted rows leave their bytes in the table files until the pages are reused, so the tables
   * an erasure touches are compacted (compaction.ts: VACUUM FULL and a WAL switch on PGlite, VACUUM on Postgres).
   * markCompactionDue() first (before the rows go), so that a kill before compact() is caught up at the next start
   * (compactIfDue()).
   */
  markCompactionDue(): Promise<void>;
  compact(): Promise<CompactionResult>;
  compactIfDue(): Promise<CompactionResult | null>;
  close(): Promise<void>;
}

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../migrations");

/**
 * Postgres through `pg` when a URL is given, otherwise an embedded PGlite on disk under dataDir/pglite.
 * Both run the same migrations from ./migrations.
 */
export async function openDatabase(opts: { url?: string; dataDir: string; onError?: (err: Error) => void }): Promise<Database> {
  if (opts.url) {
    const { Pool } = await import("pg");
    const { drizzle } = await import("drizzle-orm/node-postgres");
    const { migrate } = await import("drizzle-orm/node-postgres/migrator");
    const pool = new Pool({ connectionString: opts.url, max: 10 });
    // An idle connection that the server closes (restart, failover, pg_terminate_backend) is reported here;
    // without a listener it would be an uncaught exception that takes the whole service down.
    // The pool drops that client and opens a new one on the next query.
    pool.on("error", (err) => opts.onError?.(err));
    const db = drizzle(pool, { schema }) as unknown as Db;
    return {
      db,
      kind: "postgres",
      migrate: () => underMigrationLock(pool, () => migrate(db as never, { migrationsFolder: MIGRATIONS_DIR })),
      ping: () => ping(db),
      listen: (channel, onNotify, onState) => listenPg(opts.url!, channel, onNotify, onState, opts.onError),
      ...compactionOf({ kind: "postgres", query: async (text) => (await pool.query<Record<string, unknown>>(text)).rows }),
      close: () => pool.end(),
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const { migrate } = await import("drizzle-orm/pglite/migrator");
  const dir = path.join(opts.dataDir, "pglite");
  fs.mkdirSync(dir, { recursive: true });
  // wal_recycle off: a WAL segment past the last checkpoint is deleted, not renamed for reuse with its old contents
  // (the inserts of rows an erasure removed would otherwise stay readable in pg_wal/ until overwritten).
  const client = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, "-c", "wal_recycle=off"] });
  const db = drizzle(client, { schema }) as unknown as Db;
  return {
    db,
    kind: "pglite",
    migrate: () => migrate(db as never, { migrationsFolder: MIGRATIONS_DIR }),
    ping: () => ping(db),
    // One process owns a PGlite folder, so every NOTIFY comes from this process and is never missed.
    listen: async (channel, onNotify, onState) => {
      const unlisten = await client.listen(channel, onNotify);
      onState(true);
      return unlisten;
    },
    ...compactionOf({
      kind: "pglite",
      query: async (text) => (await client.query<Record<string, unknown>>(text)).rows,
      dueFile: path.join(opts.dataDir, "pglite.compaction-due"),
    }),
    close: () => client.close(),
  };
}

/**
 * A dedicated connection for LISTEN (a pooled one would be handed to other queries). It reconnects with
 * backoff; while it is down the listener is told so (onState(false)) and must not trust what it cached.
 */
async function listenPg(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  onState: (listening: boolean) => void,
  onError?: (err: Error) => void,
): Promise<() => Promise<void>> {
  const { Client } = await import("pg");
  let stopped = false;
  let client: InstanceType<typeof Client> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 250;
  const connect = async (): Promise<void> => {
    const c = new Client({ connectionString: url });
    client = c;
    const lost = (err?: Error) => {
      if (client !== c) return;
      client = undefined;
      onState(false);
      if (err) onError?.(err);
      c.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, 10_000);
    };
    c.on("error", lost);
    c.on("end", () => lost());
    c.on("notification", (n) => {
      if (n.channel === channel) onNotify(n.payload ?? "");
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
      delay = 250;
      onState(true);
    } catch (err) {
      lost(err as Error);
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const c = client;
    client = undefined;
    await c?.end().catch(() => undefined);
  };
}

/**
 * Runs the migrations while holding a Postgres advisory lock. Processes that start together against one database
 * (api replicas and workers of a Swarm or Kubernetes rollout, which have no start order) would otherwise all see
 * the same missing migrations and create the same tables at once; all but one then failed on Postgres's catalog
 * ("duplicate key value violates unique constraint pg_type_typname_nsp_index"). With the lock, the first applies
 * them and the others wait, then find nothing left to do. The lock is held by its own pooled connection and ends
 * with it, even if this process dies.
 */
async function underMigrationLock(pool: import("pg").Pool, run: () => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock(hashtext('builder:migrations'))");
    try {
      await run();
    } finally {
      await client.query("select pg_advisory_unlock(hashtext('builder:migrations'))");
    }
  } finally {
    client.release();
  }
}

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
