import type { Command } from "commander";
import { config } from "../config.js";
import { installProcessGuard } from "../process-guard.js";
import { startServer } from "../server.js";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("apply migrations and start the HTTP API (and the in-process job runner)")
    .option("-p, --port <port>", "port (default: PORT or 8080)")
    .action(async (opts: { port?: string }) => {
      const cfg = config();
      const running = await startServer(cfg, { port: opts.port ? Number(opts.port) : undefined });
      const log = running.services.logger;
      // Only now: a failure before this point is a start-up failure and must still end the process.
      installProcessGuard(log);
      log.info(
        {
          url: `http://localhost:${running.port}`,
          listening_on: cfg.HOST,
          database: running.services.database.kind,
          data_dir: cfg.dataDir,
        },
        "Builder is up",
      );
      // Printed plainly (not only as JSON) because this is the first thing a new operator reads. The setup code goes
      // to the terminal only, not the JSON log: it is a one-time credential, and log files are often shipped
      // elsewhere. A new one is printed whenever the server has no administrator (FirstRunSetup says when).
      const firstRun = running.services.auth.firstRun;
      firstRun.onNewCode((code, expiresAt) => {
        process.stderr.write(
          `\nBuilder is running on http://localhost:${running.port} with no administrator.\n` +
            `Open http://localhost:${running.port}/ and create the administrator's account with this setup code:\n\n` +
            `    ${code}\n\n` +
            `It works until ${expiresAt.toISOString()} (SETUP_CODE_TTL_HOURS); after that, restart the server for a new one.\n` +
            `(Or on the command line: ./builder users create --admin --email you@hospital.org --password '<a long password>'.)\n` +
            `Then make an API key in Settings → API (or: ./builder keys create --email you@hospital.org --name first-key).\n\n`,
        );
      });
      await firstRun.ensureCode();
      const shutdown = (signal: string) => {
        log.info({ signal }, "shutting down: finishing in-flight requests");
        running.stop().then(
          () => process.exit(0),
          (err) => {
            log.error({ err }, "shutdown failed");
            process.exit(1);
          },
        );
      };
      process.once("SIGTERM", () => shutdown("SIGTERM"));
      process.once("SIGINT", () => shutdown("SIGINT"));
    });
}
