import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Hostile input, generated: Schemathesis (a property-based fuzzer for OpenAPI; `make test` installs it into
// .venv-dev from test/requirements-dev.txt) reads /openapi.json of a real server and sends what the schemas allow
// and what they forbid, with a valid API key and a dashboard session, to every operation. Checks: no 5xx,
// every status documented, every body valid against its documented schema (the Error body for every 4xx, the
// seed's error: 1 body on the predict routes), the right content type, and 405 for undeclared methods.
// Bounded: FUZZ_MAX_EXAMPLES examples per operation (default 15) and FUZZ_MAX_TIME seconds (default 90).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ST = path.join(ROOT, ".venv-dev/bin/st");
const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_schema_conformance",
  "unsupported_method",
];

describe.skipIf(!fs.existsSync(ST))("OpenAPI fuzzing (Schemathesis) against a real server", () => {
  let server: TestServer;
  let user: UserWithKey;
  let cookie = "";
  let csrf = "";
  const EXPERIMENT = 1;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { RATE_LIMIT_PER_MINUTE: "1000000", FETCH_TIMEOUT_MS: "2000" });
    user = await createUserWithKey(server);
    if (haveFixturePython) await publishFixture(server, user.userId, EXPERIMENT, servingFixtures().modelDir("tabular_binary"));
    // The dashboard session belongs to another user, so the key-management routes it reaches (list, create, revoke
    // keys) can never revoke the API key the rest of the run uses.
    const dashboard = await createUserWithKey(server);
    const res = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: dashboard.email, password: dashboard.password }),
    });
    expect(res.status).toBe(200);
    cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
    csrf = ((await res.json()) as { csrf_token: string }).csrf_token;
  });
  afterAll(async () => server?.teardown());

  it("finds no 5xx, no undocumented status and no body that breaks its schema", { timeout: 600_000 }, async () => {
    const maxTime = Number(process.env.FUZZ_MAX_TIME ?? 90);
    const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fuzz-")), "junit.xml");
    const args = [
      "run",
      `${server.url}/openapi.json`,
      "-H",
      `Authorization: Bearer ${user.key}`,
      "-H",
      `Cookie: ${cookie}`,
      "-H",
      `x-csrf-token: ${csrf}`,
      "--checks",
      CHECKS.join(","),
      "--max-examples",
      process.env.FUZZ_MAX_EXAMPLES ?? "15",
      "--max-time",
      String(maxTime),
      "--seed",
      process.env.FUZZ_SEED ?? "16",
      "--workers",
      "1",
      "--request-timeout",
      "15",
      "--suppress-health-check",
      "all",
      "--max-failures",
      "50",
      // Signing out would end the session the other session-only operations run with.
      "--exclude-operation-id",
      "delete_v1_session",
      "--report",
      "junit",
      "--report-junit-path",
      report,
    ];
    const started = Date.now();
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(ST, args, {
        cwd: os.tmpdir(),
        env: {
          ...process.env,
          SCHEMATHESIS_HOOKS: "hooks",
          PYTHONPATH: path.join(ROOT, "test/fuzz"),
          FUZZ_EXPERIMENT_ID: String(EXPERIMENT),
          FUZZ_USER_ID: user.userId,
          NO_COLOR: "1",
          COLUMNS: "160",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (c) => (text += c));
      child.stderr.on("data", (c) => (text += c));
      child.on("close", (c) => resolve({ code: c, out: text }));
    });
    fs.writeFileSync(path.join(path.dirname(report), "output.txt"), out);
    const summary = out.match(/Test cases:\s*\n\s*(.*)/)?.[1] ?? "(no summary)";
    console.log(`schemathesis: ${summary}; ${Math.round((Date.now() - started) / 1000)} s; full output in ${path.dirname(report)}`);
    if (code !== 0) console.log(out.slice(-12_000));
    expect(code, "schemathesis found failures (see the output above)").toBe(0);
    expect(Number(summary.match(/(\d+) generated/)?.[1] ?? 0)).toBeGreaterThan(100);
    // The server is still healthy afterwards.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
