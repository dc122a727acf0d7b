import type { Command } from "commander";
import { passwordProblem } from "../auth/user.service.js";
import { CliError, fail, withAdminOps } from "./auth-db.js";

export function registerUsers(program: Command): void {
  const users = program.command("users").description("manage user accounts");
  users
    .command("create")
    .description("create a user; prints the new user's id as the last line of stdout")
    .requiredOption("--email <email>", "the user's email (their sign-in name)")
    .requiredOption("--password <password>", "at least 12 characters")
    .action(async (opts: { email: string; password: string }) => {
      try {
        // Checked before the database opens, so a typo fails fast.
        const weak = passwordProblem(opts.password);
        if (weak) throw new CliError(`error: ${weak}`, 2);
        const user = await withAdminOps((ops) => ops.createUser({ email: opts.email, password: opts.password }));
        process.stdout.write(`created user ${user.email}\n${user.id}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
