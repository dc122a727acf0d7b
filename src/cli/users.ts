import { say } from "../errors.js";
import type { Command } from "commander";
import { passwordProblem } from "../auth/user.service.js";
import { config } from "../config.js";
import { createLogger } from "../logger.js";
import { createServices } from "../services.js";
import { CliError, fail, withAdminOps } from "./auth-db.js";

export function registerUsers(program: Command): void {
  const users = program.command("users").description("manage user accounts");
  users
    .command("create")
    .description("create a user; prints the new user's id as the last line of stdout")
    .requiredOption("--email <email>", "the user's email (their sign-in name)")
    .requiredOption("--password <password>", "at least 12 characters")
    .option("--admin", "make the user an administrator (Settings → Users); the first user of a server always is one")
    .action(async (opts: { email: string; password: string; admin?: boolean }) => {
      try {
        // Checked before the database opens, so a typo fails fast.
        const weak = passwordProblem(opts.password);
        if (weak) throw new CliError(`error: ${say(weak, "en")}`, 2);
        const user = await withAdminOps((ops) => ops.createUser({ email: opts.email, password: opts.password, admin: opts.admin }));
        process.stdout.write(`created ${user.role === "admin" ? "administrator" : "user"} ${user.email}\n${user.id}\n`);
      } catch (err) {
        fail(err);
      }
    });
  users
    .command("set-role")
    .description("make a user an administrator (who manages users in the dashboard) or a member")
    .requiredOption("--email <email>", "the user's email")
    .requiredOption("--role <role>", "admin or member")
    .action(async (opts: { email: string; role: string }) => {
      try {
        if (opts.role !== "admin" && opts.role !== "member") throw new CliError("error: --role must be admin or member", 2);
        const role = opts.role;
        const user = await withAdminOps((ops) => ops.setRole({ email: opts.email, role }));
        process.stdout.write(`${user.email} is now ${role === "admin" ? "an administrator" : "a member"}\n${user.id}\n`);
      } catch (err) {
        fail(err);
      }
    });
  users
    .command("erase")
    .description(
      "erase an account and everything of it: experiments, models, reports, datasets, API keys, sessions, chat conversations and logs, in the database and the bucket",
    )
    .requiredOption("--email <email>", "the user's email")
    .action(async (opts: { email: string }) => {
      try {
        // Marked first (signed out, keys gone): a running server on PGlite finishes it through its erasure sweep.
        let remote = false;
        const { id } = await withAdminOps(async (ops) => {
          remote = ops.remote === true;
          return ops.markForErasure({ email: opts.email });
        });
        if (remote) {
          process.stdout.write(
            `erasing ${opts.email}: signed out and API keys deleted; the running server removes the rest within about 10 seconds\n${id}\n`,
          );
          return;
        }
        // Otherwise this process does it, with the same code the server runs (a server on Postgres may join in: every step is idempotent).
        const services = await createServices(config(), { runner: false, logger: createLogger("warn") });
        try {
          await services.audit.record({ userId: id, via: "cli" }, "account_erasure_requested");
          await services.erasure.finish(id);
          if (await services.auth.users.findById(id))
            throw new CliError(`error: the erasure of ${opts.email} is not finished (see the log above); run the command again`, 1);
        } finally {
          await services.close();
        }
        process.stdout.write(`erased ${opts.email}\n${id}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
