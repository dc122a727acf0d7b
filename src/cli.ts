import { Command } from "commander";
import { ConfigError } from "./config.js";
import { registerMigrate } from "./cli/migrate.js";
import { registerServe } from "./cli/serve.js";
import { registerUsers } from "./cli/users.js";
import { registerKeys } from "./cli/keys.js";
import { registerWorker } from "./cli/worker.js";
import { registerUpload } from "./cli/upload.js";
import { registerBackbones } from "./cli/backbones.js";

// `./builder <command>`: each command lives in src/cli/<command>.ts.
export async function runCli(argv: string[]): Promise<void> {
  const program = new Command("builder").description("Builder: no-code medical AI").showHelpAfterError();
  registerServe(program);
  registerMigrate(program);
  registerUsers(program);
  registerKeys(program);
  registerWorker(program);
  registerUpload(program);
  registerBackbones(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}
