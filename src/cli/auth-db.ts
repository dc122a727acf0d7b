import { config } from "../config.js";
import { openDatabase } from "../db/client.js";
import { ApiKeyService } from "../auth/api-key.service.js";
import { UserService } from "../auth/user.service.js";
import { ApiError } from "../http/errors.js";

/** A CLI failure: the message is printed on stderr and the process exits with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, public readonly exitCode = 1) {
    super(message);
  }
}

/**
 * Runs `fn` with the user and key services on the configured database (migrated first, so a fresh data
 * folder works), closes the database, and turns service errors into plain CLI messages.
 */
export async function withAuthDb<T>(fn: (s: { users: UserService; apiKeys: ApiKeyService }) => Promise<T>): Promise<T> {
  const cfg = config();
  const database = await openDatabase({ url: cfg.DATABASE_URL, dataDir: cfg.dataDir });
  try {
    await database.migrate();
    return await fn({ users: new UserService(database.db), apiKeys: new ApiKeyService(database.db) });
  } catch (err) {
    if (err instanceof ApiError) throw new CliError(`error: ${err.message}`, err.status === 409 ? 3 : 2);
    throw err;
  } finally {
    await database.close();
  }
}

export function fail(err: unknown): never {
  if (err instanceof CliError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err.exitCode);
  }
  throw err;
}
