// Run by test/unit/process-guard.test.ts in its own process: `node --import tsx guard-child.ts guard|none`.
// Throws from a callback inside a request's context and leaves a rejection unhandled, then says whether it is
// still alive. With the guard it must be; without it (the control) Node ends the process.
import { createLogger } from "../../src/logger.js";
import { installProcessGuard, requestContext } from "../../src/process-guard.js";

if (process.argv[2] === "guard") installProcessGuard(createLogger("info"));
requestContext.run({ requestId: "req-guard-test" }, () => {
  setTimeout(() => {
    throw new Error("boom from a stray callback");
  }, 10);
});
void Promise.reject(new Error("nobody awaited this"));
setTimeout(() => {
  process.stdout.write("still alive\n");
  process.exit(0);
}, 300);
