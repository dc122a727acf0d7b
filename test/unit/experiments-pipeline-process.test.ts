import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runPipeline } from "../../src/jobs/pipeline-process.js";
import { planSlots, slotEnv } from "../../src/jobs/gpu-slots.js";
import { deliverCallback, signCallback } from "../../src/jobs/callback.js";
import { createHmac } from "node:crypto";
import { createLogger } from "../../src/logger.js";
import { say } from "../../src/errors.js";

// A stand-in "python" (a shell script) lets these tests drive the process boundary precisely: what it prints,
// whether it ignores SIGTERM. The real pipeline runs in the integration tests.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pipeline-proc-"));
function fakePython(body: string): string {
  const file = path.join(dir, `py-${Math.random().toString(36).slice(2)}.sh`);
  fs.writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
  return file;
}
const base = (python: string, extra: Partial<Parameters<typeof runPipeline>[0]> = {}) => ({
  python,
  command: "train" as const,
  specPath: "/nonexistent/spec.json",
  outDir: dir,
  logFile: path.join(dir, "job.log"),
  timeoutMs: 20_000,
  signal: new AbortController().signal,
  onEvent: () => undefined,
  killGraceMs: 500,
  ...extra,
});
const alive = (marker: string) => {
  try {
    return execFileSync("pgrep", ["-f", marker]).toString().trim().length > 0;
  } catch {
    return false;
  }
};

describe("pipeline process boundary", () => {
  it("passes schema-valid events and reads the result, keeping stderr in the log", async () => {
    const events: unknown[] = [];
    const py = fakePython(
      `echo '{"type":"progress","stage":"training","progress":0.5,"epoch":1}'\necho 'a log line' >&2\necho '{"type":"result","manifest":"manifest.json"}'`,
    );
    const out = await runPipeline(base(py, { onEvent: (e) => events.push(e) }));
    expect(out).toEqual({ kind: "ok", manifest: "manifest.json" });
    expect(events).toHaveLength(2);
    expect(fs.readFileSync(path.join(dir, "job.log"), "utf8")).toContain("a log line");
  });

  it("runs the process in its device slot: CUDA_VISIBLE_DEVICES and thread counts from the slot reach it", async () => {
    const [slot] = planSlots([{ index: "3", id: "GPU-abc", name: "fake GPU", memoryMiB: null }], { slots: 2, cpus: 6 });
    const py = fakePython(
      `echo "visible=[$CUDA_VISIBLE_DEVICES] omp=$OMP_NUM_THREADS" >&2\necho '{"type":"result","manifest":"manifest.json"}'`,
    );
    const logFile = path.join(dir, "slot.log");
    expect((await runPipeline(base(py, { logFile, env: slotEnv(slot!) }))).kind).toBe("ok");
    expect(fs.readFileSync(logFile, "utf8")).toContain("visible=[GPU-abc] omp=3");
    const [cpuSlot] = planSlots([], { cpus: 2 });
    await runPipeline(base(py, { logFile, env: slotEnv(cpuSlot!) }));
    expect(fs.readFileSync(logFile, "utf8")).toContain("visible=[] omp=2");
  });

  it("fails the job on a malformed event and kills the process", async () => {
    const marker = `malformed-${Date.now()}`;
    const py = fakePython(`echo '{"type":"progress","stage":"dreaming","progress":0.1}'\nsleep 30 # ${marker}`);
    const t0 = Date.now();
    const out = await runPipeline(base(py));
    expect(out.kind).toBe("contract_error");
    expect((out as { message: string }).message).toMatch(/event\.schema\.json/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("fails on a non-JSON stdout line", async () => {
    const out = await runPipeline(base(fakePython(`echo 'hello from print()'`)));
    expect(out.kind).toBe("contract_error");
  });

  it("maps exit codes: 3 = data error with the pipeline's message, 1 = failure", async () => {
    const data = await runPipeline(
      base(fakePython(`echo '{"type":"log","level":"error","message":"label column has one class"}'\nexit 3`)),
    );
    // A pipeline that names no key (older than data-problems.json): its English, said to be English words elsewhere.
    expect(data).toMatchObject({ kind: "data_error", message: "label column has one class" });
    expect(data.kind === "data_error" && data.text).toMatchObject({ key: "errors:build.pipeline_data" });
    // One that names its key and values: the catalog's problems:pipeline.<key>, said in each reader's language.
    const keyed = await runPipeline(
      base(
        fakePython(
          `echo '{"type":"log","level":"error","message":"label column has a single class","key":"label_single_class","params":{"column":"dx"}}'\nexit 3`,
        ),
      ),
    );
    expect(keyed).toMatchObject({ kind: "data_error", message: "label column has a single class" });
    expect(keyed.kind === "data_error" && say(keyed.text, "es")).toBe(
      "la columna de etiqueta «dx» tiene una sola clase: un modelo necesita al menos dos para distinguir",
    );
    // A key with values other than the contract names is not trusted to fill the catalog's message.
    const wrong = await runPipeline(
      base(fakePython(`echo '{"type":"log","level":"error","message":"x","key":"label_single_class","params":{"col":"dx"}}'\nexit 3`)),
    );
    expect(wrong.kind === "data_error" && wrong.text.key).toBe("errors:build.pipeline_data");
    const crashed = await runPipeline(base(fakePython(`echo '{"type":"log","level":"error","message":"RuntimeError: boom"}'\nexit 1`)));
    expect(crashed.kind === "error" && crashed.message).toBe(
      "the training stopped on an unexpected error (RuntimeError: boom); the job log has the details",
    );
    expect((await runPipeline(base(fakePython("exit 1")))).kind).toBe("error");
    expect((await runPipeline(base(fakePython("exit 0")))).kind).toBe("contract_error");
  });

  it("cancel: a process that ignores SIGTERM is SIGKILLed with its whole group within the grace", async () => {
    const marker = `stubborn-${Date.now()}`;
    // The grandchild carries the marker on its command line, so pgrep can see whether the group kill reached it.
    const py = fakePython(
      `trap '' TERM\nbash -c "trap '' TERM; sleep 60; echo ${marker}" &\necho '{"type":"progress","stage":"training","progress":0.1}'\nwhile true; do sleep 0.1; done`,
    );
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const done = runPipeline(base(py, { signal: controller.signal, onEvent: () => started() }));
    await running;
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(marker)).toBe(true);
    const t0 = Date.now();
    controller.abort("cancel");
    expect(await done).toEqual({ kind: "cancelled" });
    expect(Date.now() - t0).toBeLessThan(5000);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(marker)).toBe(false);
  });

  it("kills a process that runs past its time limit", async () => {
    const out = await runPipeline(base(fakePython("sleep 30"), { timeoutMs: 500 }));
    expect(out.kind).toBe("timeout");
    expect((out as { message: string }).message).toMatch(/time limit/);
  });
});

describe("callback", () => {
  it("signs t.<body> with HMAC-SHA256 and retries 5xx with backoff until delivered", async () => {
    const seen: Array<{ headers: Record<string, string>; body: string }> = [];
    const statuses = [503, 502, 200];
    const result = await deliverCallback(
      "https://example.test/hook",
      { experiment_id: 1, user_id: "u", status: "ready", at: "now" },
      {
        secret: "0123456789abcdef",
        logger: createLogger("silent"),
        baseDelayMs: 5,
        send: async (_url, init) => (seen.push(init), { status: statuses[seen.length - 1] }),
      },
    );
    expect(result).toMatchObject({ delivered: true, attempts: 3 });
    const sig = seen[2].headers["x-builder-signature"];
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig)!;
    expect(v1).toBe(createHmac("sha256", "0123456789abcdef").update(`${t}.${seen[2].body}`).digest("hex"));
    expect(signCallback("0123456789abcdef", "x", 5)).not.toBe(signCallback("0123456789abcdef", "y", 5));
  });

  it("does not retry a 4xx answer", async () => {
    let calls = 0;
    const result = await deliverCallback(
      "https://example.test/hook",
      { experiment_id: 1, user_id: "u", status: "failed", at: "now" },
      { secret: "0123456789abcdef", logger: createLogger("silent"), baseDelayMs: 5, send: async () => (calls++, { status: 410 }) },
    );
    expect(result.delivered).toBe(false);
    expect(calls).toBe(1);
  });
});
