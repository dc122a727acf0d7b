import type { Command } from "commander";
import { config } from "../config.js";
import { openDatabase } from "../db/client.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("apply database migrations (PGlite under BUILDER_DATA_DIR, or DATABASE_URL)")
    .action(async () => {
      const cfg = config();
      const database = await openDatabase({ url: cfg.DATABASE_URL, dataDir: cfg.dataDir });
      await database.migrate();
      await database.close();
      console.log(`migrations applied (${database.kind})`);
    });
}
