import type { Command } from "commander";
import { CliError, fail, withAdminOps } from "./auth-db.js";

function iso(d: Date | null): string {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : "-";
}

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("manage API keys");
  keys
    .command("create")
    .description("create an API key for a user; prints the key (shown only this once) as the last line of stdout")
    .requiredOption("--email <email>", "the owner's email")
    .option("--name <name>", "a label to tell keys apart", "default")
    .option("--rate-limit <per_minute>", "requests per minute for this key (default: RATE_LIMIT_PER_MINUTE)")
    .action(async (opts: { email: string; name: string; rateLimit?: string }) => {
      try {
        let rateLimitPerMinute: number | undefined;
        if (opts.rateLimit !== undefined) {
          rateLimitPerMinute = Number(opts.rateLimit);
          if (!/^\d+$/.test(opts.rateLimit) || rateLimitPerMinute < 1)
            throw new CliError("error: --rate-limit must be a whole number of requests per minute, at least 1", 2);
        }
        const { key, info } = await withAdminOps((ops) => ops.createKey({ email: opts.email, name: opts.name, rateLimitPerMinute }));
        // Only the last line is secret; the note goes to stderr so `| tail -1` and `$(...)` capture just the key.
        process.stderr.write(`created API key ${info.id} (${info.prefix}...) named "${info.name}"; store it now, it is not shown again\n`);
        process.stdout.write(`${key}\n`);
      } catch (err) {
        fail(err);
      }
    });

  keys
    .command("list")
    .description("list a user's API keys (never the keys themselves)")
    .requiredOption("--email <email>", "the owner's email")
    .option("--json", "one JSON object per line")
    .action(async (opts: { email: string; json?: boolean }) => {
      try {
        const rows = await withAdminOps((ops) => ops.listKeys({ email: opts.email }));
        if (opts.json) {
          for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
          return;
        }
        const table = [["ID", "NAME", "PREFIX", "RATE/MIN", "CREATED", "LAST USED", "REVOKED"]];
        for (const r of rows) {
          table.push([
            r.id,
            r.name,
            r.prefix,
            r.rateLimitPerMinute ? String(r.rateLimitPerMinute) : "default",
            iso(r.createdAt),
            iso(r.lastUsedAt),
            iso(r.revokedAt),
          ]);
        }
        const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
        for (const row of table)
          process.stdout.write(
            `${row
              .map((c, i) => c.padEnd(widths[i]))
              .join("  ")
              .trimEnd()}\n`,
          );
      } catch (err) {
        fail(err);
      }
    });

  keys
    .command("revoke")
    .description("revoke an API key by its id (from `keys list`) or by the key itself; takes effect on the next request")
    .argument("<key_id_or_key>")
    .action(async (idOrKey: string) => {
      try {
        const info = await withAdminOps((ops) => ops.revokeKey({ idOrKey: idOrKey.trim() }));
        process.stdout.write(`revoked API key ${info.id} (${info.prefix}...) at ${iso(info.revokedAt)}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
