import type { Command } from "commander";
import { CliError, fail, withAdminOps } from "./auth-db.js";
import { isKeyScope, KEY_SCOPES, type KeyScope } from "../auth/key-scopes.js";

function iso(d: Date | null): string {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : "-";
}

/** --scopes predict,read: each a known scope. */
function parseScopes(text: string): KeyScope[] {
  const scopes = text
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !isKeyScope(s));
  if (unknown.length || scopes.length === 0)
    throw new CliError(`error: --scopes takes a comma-separated list of ${KEY_SCOPES.join(", ")} (got "${text}")`, 2);
  return scopes as KeyScope[];
}

/** --models 3,7: experiment numbers. */
function parseModels(text: string): number[] {
  const parts = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!parts.length || parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1))
    throw new CliError(`error: --models takes a comma-separated list of experiment numbers (got "${text}")`, 2);
  return parts.map(Number);
}

/** --expires 2027-01-31 or an ISO time, or a number of days (30d). */
function parseExpiry(text: string, now = Date.now()): string {
  const days = /^(\d+)d$/.exec(text.trim());
  const at = days ? new Date(now + Number(days[1]) * 86_400_000) : new Date(text);
  if (Number.isNaN(at.getTime()))
    throw new CliError(`error: --expires takes a date (2027-01-31), an ISO time or a number of days (30d) (got "${text}")`, 2);
  return at.toISOString();
}

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("manage API keys");
  keys
    .command("create")
    .description("create an API key for a user; prints the key (shown only this once) as the last line of stdout")
    .requiredOption("--email <email>", "the owner's email")
    .option("--name <name>", "a label to tell keys apart", "default")
    .option("--rate-limit <per_minute>", "requests per minute for this key (default: RATE_LIMIT_PER_MINUTE)")
    .option("--scopes <list>", `what the key may do, comma-separated: ${KEY_SCOPES.join(", ")} (read < build < admin)`, "predict")
    .option("--models <ids>", "only these experiments' models may be called with predict (comma-separated numbers)")
    .option("--expires <when>", "when the key stops working: a date (2027-01-31), an ISO time or days from now (30d)")
    .action(async (opts: { email: string; name: string; rateLimit?: string; scopes: string; models?: string; expires?: string }) => {
      try {
        let rateLimitPerMinute: number | undefined;
        if (opts.rateLimit !== undefined) {
          rateLimitPerMinute = Number(opts.rateLimit);
          if (!/^\d+$/.test(opts.rateLimit) || rateLimitPerMinute < 1)
            throw new CliError("error: --rate-limit must be a whole number of requests per minute, at least 1", 2);
        }
        const scopes = parseScopes(opts.scopes);
        const modelIds = opts.models === undefined ? undefined : parseModels(opts.models);
        const expiresAt = opts.expires === undefined ? undefined : parseExpiry(opts.expires);
        const { key, info } = await withAdminOps((ops) =>
          ops.createKey({ email: opts.email, name: opts.name, rateLimitPerMinute, scopes, modelIds, expiresAt }),
        );
        // Only the last line is secret; the note goes to stderr so `| tail -1` and `$(...)` capture just the key.
        const limits = [
          `scopes ${info.scopes?.join(",")}`,
          info.modelIds ? `models ${info.modelIds.join(",")}` : "",
          info.expiresAt ? `expires ${iso(info.expiresAt)}` : "",
        ].filter(Boolean);
        process.stderr.write(
          `created API key ${info.id} (${info.prefix}...) named "${info.name}" (${limits.join("; ")}); store it now, it is not shown again\n`,
        );
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
        const table = [["ID", "NAME", "PREFIX", "SCOPES", "MODELS", "RATE/MIN", "CREATED", "BY", "LAST USED", "EXPIRES", "REVOKED"]];
        for (const r of rows) {
          table.push([
            r.id,
            r.name,
            r.prefix,
            // A key made before scopes may do everything: say so rather than print nothing.
            r.scopes ? r.scopes.join(",") : "all (legacy)",
            r.modelIds ? r.modelIds.join(",") : "all",
            r.rateLimitPerMinute ? String(r.rateLimitPerMinute) : "default",
            iso(r.createdAt),
            r.createdByEmail ?? "former member",
            iso(r.lastUsedAt),
            iso(r.expiresAt),
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
