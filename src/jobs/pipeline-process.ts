import { spawn } from "node:child_process";
import fs from "node:fs";
import readline from "node:readline";
import { contractErrors } from "../contract/validate.js";
import { dataProblemText } from "../contract/data-problems.js";
import type { PipelineEvent } from "../contract/types.js";
import { msg, say, type Message } from "../errors.js";
import { defaultPython, PIPELINES_DIR } from "../pipelines-python.js";

export { defaultPython, PIPELINES_DIR };

// Linux: ask the kernel to SIGKILL the pipeline when its parent (this Node process) dies, so a kill -9 of
// `serve` or of a worker never leaves an orphan training on after the job was handed to another runner.
// The check of getppid closes the race where the parent died before prctl ran.
const PRELUDE = [
  "import os, sys, runpy",
  "parent = int(os.environ.get('BUILDER_PARENT_PID', '0'))",
  "if sys.platform.startswith('linux'):",
  "    import ctypes",
  "    ctypes.CDLL(None, use_errno=True).prctl(1, 9)",
  "    if parent and os.getppid() != parent: os._exit(137)",
  "sys.argv = ['builder_pipelines'] + sys.argv[1:]",
  "runpy.run_module('builder_pipelines', run_name='__main__', alter_sys=True)",
].join("\n");

/** A way the pipeline failed: its words from the catalog (text), and their English (message) for logs. */
type Failed<K extends string> = { kind: K; message: string; text: Message };

export type PipelineOutcome =
  | { kind: "ok"; manifest: string }
  | Failed<"spec_error">
  | Failed<"data_error">
  | Failed<"error">
  | Failed<"contract_error">
  | Failed<"timeout">
  | { kind: "cancelled" };

function failed<K extends string>(kind: K, text: Message): Failed<K> {
  return { kind, message: say(text, "en"), text };
}

/** The last error event: its English, and the data problem's key and values when it named one. */
type LastError = Extract<PipelineEvent, { type: "log" }>;

export interface PipelineRun {
  python: string;
  command: "train" | "evaluate";
  specPath: string;
  outDir: string;
  logFile: string;
  /** Wall-clock limit; the process group is killed past it. */
  timeoutMs: number;
  signal: AbortSignal;
  onEvent: (event: PipelineEvent) => void;
  /** Added to the process environment: the device slot's CUDA_VISIBLE_DEVICES and thread counts. */
  env?: Record<string, string>;
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceMs?: number;
}

/**
 * Runs one pipeline process: JSON-lines events on stdout (each validated against event.schema.json),
 * stderr appended to the job log, the exit code as outcome. A malformed event ends the job: the two sides
 * disagree and nothing it says afterwards can be trusted.
 */
export function runPipeline(run: PipelineRun): Promise<PipelineOutcome> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(run.logFile, { flags: "a" });
    const child = spawn(run.python, ["-c", PRELUDE, run.command, "--spec", run.specPath, "--out", run.outDir], {
      cwd: PIPELINES_DIR,
      detached: true, // its own process group, so cancel reaches every process it started
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...run.env, PYTHONPATH: PIPELINES_DIR, PYTHONUNBUFFERED: "1", BUILDER_PARENT_PID: String(process.pid) },
    });
    let stopReason: PipelineOutcome | undefined;
    let lastError: LastError | undefined;
    let resultManifest: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const killGroup = (reason: PipelineOutcome) => {
      stopReason ??= reason;
      if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
      killTimer ??= setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* already gone */
        }
      }, run.killGraceMs ?? 2000);
    };

    const onAbort = () => killGroup({ kind: "cancelled" });
    if (run.signal.aborted) onAbort();
    else run.signal.addEventListener("abort", onAbort, { once: true });
    const timeout = setTimeout(
      () => killGroup(failed("timeout", msg("build.timeout", { seconds: Math.round(run.timeoutMs / 1000) }))),
      run.timeoutMs,
    );

    child.stderr.pipe(log, { end: false });
    const lines = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => {
      if (stopReason || !line.trim()) return;
      const ev = parseEventLine(line);
      if (!("type" in ev)) return void killGroup(ev); // a contract error (events all have a type)
      if (ev.type === "log" && ev.level === "error") lastError = ev;
      if (ev.type === "result") resultManifest = ev.manifest;
      run.onEvent(ev);
    });

    child.on("error", (err) => {
      stopReason ??= failed("error", msg("build.pipeline_not_started", { detail: `${run.python}: ${err.message}` }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timeout);
      clearTimeout(killTimer);
      run.signal.removeEventListener("abort", onAbort);
      const outcome = stopReason ?? exitOutcome(code, signal, lastError, resultManifest);
      // Resolve once the log is flushed, so a reader right after the outcome sees all of stderr.
      log.end(`\n[builder] pipeline exited with ${code ?? signal}\n`, () => resolve(outcome));
    });
  });
}

/** One stdout line as an event, or the contract error that ends the job. */
function parseEventLine(line: string): PipelineEvent | Extract<PipelineOutcome, { kind: "contract_error" }> {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return failed(
      "contract_error",
      msg("build.pipeline_contract", { detail: `the pipeline wrote a stdout line that is not JSON: ${line.slice(0, 200)}` }),
    );
  }
  const problems = contractErrors("event", event);
  if (problems.length) {
    const detail = `the pipeline wrote an event that breaks event.schema.json (${problems.slice(0, 3).join("; ")}): ${line.slice(0, 200)}`;
    return failed("contract_error", msg("build.pipeline_contract", { detail }));
  }
  return event as PipelineEvent;
}

/** The exit code's meaning (0 with a result, 2 spec refused, 3 unusable data), with the pipeline's last error line. */
function exitOutcome(
  code: number | null,
  signal: NodeJS.Signals | null,
  lastError: LastError | undefined,
  resultManifest: string | undefined,
): PipelineOutcome {
  if (code === 0)
    return resultManifest
      ? { kind: "ok", manifest: resultManifest }
      : failed("contract_error", msg("build.pipeline_contract", { detail: "the pipeline exited 0 without a result event" }));
  if (code === 2)
    return failed("spec_error", msg("build.pipeline_contract", { detail: lastError?.message ?? "the pipeline refused the job spec" }));
  if (code === 3) {
    // The data problem as the pipeline named it (key and values), said in each reader's language; its English stays
    // the message, as it was before pipelines sent keys.
    const text = dataProblemText(lastError?.key, lastError?.params);
    if (text) return { kind: "data_error", message: lastError!.message, text };
    // A pipeline that named no key (older than data-problems.json): its English, as before, and in other languages
    // said to be English words.
    const english = lastError?.message ?? "the pipeline could not use the data";
    return { kind: "data_error", message: english, text: msg("build.pipeline_data", { detail: english }) };
  }
  if (lastError) return failed("error", msg("build.pipeline_failed", { detail: lastError.message }));
  return failed("error", msg("build.pipeline_failed_silent", { code: String(code ?? signal) }));
}
