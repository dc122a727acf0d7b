import { directOps, type AdminOps } from "../auth/admin-ops.js";
import { AdminRepository } from "../auth/admin.repository.js";
import { AuditLog } from "../audit/audit-log.js";
import { createLogger } from "../logger.js";
import { adminSocketPath, remoteOps } from "../auth/admin-socket.js";
import { ApiKeyService } from "../auth/api-key.service.js";
import { UserService } from "../auth/user.service.js";
import { config } from "../config.js";
import { openDatabase } from "../db/client.js";
import { ApiError } from "../errors.js";

/** A CLI failure: the message is printed on stderr and the process exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    public readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * Runs `fn` with the user and key operations. On PGlite with a server running on the same data folder, the
 * server does them (PGlite allows one process per folder); otherwise the database is opened (and migrated, so a
 * fresh data folder works) here. Service errors become plain CLI messages.
 */
export async function withAdminOps<T>(fn: (ops: AdminOps) => Promise<T>): Promise<T> {
  const cfg = config();
  try {
    const remote = cfg.DATABASE_URL ? undefined : await remoteOps(adminSocketPath(cfg.dataDir));
    if (remote) return await fn(remote);
    const database = await openDatabase({ url: cfg.DATABASE_URL, dataDir: cfg.dataDir });
    try {
      await database.migrate();
      const audit = new AuditLog({ db: database.db, logger: createLogger("warn") });
      return await fn(directOps(new UserService(database.db), new ApiKeyService(database.db), new AdminRepository(database.db), audit));
    } finally {
      await database.close();
    }
  } catch (err) {
    if (err instanceof ApiError) throw new CliError(`error: ${err.message}`, err.status === 409 ? 3 : 2);
    throw err;
  }
}

export function fail(err: unknown): never {
  if (err instanceof CliError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err.exitCode);
  }
  throw err;
}
