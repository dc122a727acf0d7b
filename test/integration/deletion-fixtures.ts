import fs from "node:fs";
import path from "node:path";
import pg from "pg";

/** Every file under a data folder, relative, sorted: the "before" and "after" of a deletion. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith("pglite/") && !f.endsWith(".sock"))
    .sort();
}

/** Writes a file (and its folders) under the data folder, as a job or a replica would have left it. */
export function plant(dir: string, rel: string, content = "x"): string {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return rel;
}

/**
 * How many rows of each table with a user id column (found in the catalogue, so a table added later is covered
 * too) hold `userId`; also the experiment events and chat messages reached through their parents.
 */
export async function rowsOfUser(databaseUrl: string, userId: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ table_name: string }>(
      "select table_name from information_schema.columns where table_schema = 'public' and column_name = 'user_id' order by table_name",
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables) {
      counts[table_name] = Number(
        (await client.query(`select count(*)::int as n from "${table_name}" where user_id = $1`, [userId])).rows[0].n,
      );
    }
    counts.users = Number((await client.query("select count(*)::int as n from users where id = $1", [userId])).rows[0].n);
    // Text anywhere in the other tables that names the user (a path, a log line): events' data, for one.
    counts.experiment_events_naming_user = Number(
      (await client.query("select count(*)::int as n from experiment_events where data::text like $1", [`%${userId}%`])).rows[0].n,
    );
    return counts;
  } finally {
    await client.end();
  }
}
