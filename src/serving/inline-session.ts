import fs from "node:fs";
import * as ort from "onnxruntime-node";

/**
 * Tiny tabular models run on the event loop, not on a worker thread. A typical tabular run costs the native
 * engine a few microseconds; handing it to a thread costs the event loop about as much (posting the row, waking
 * the thread, receiving and rebuilding the outputs: an estimate, as is the ~0.02 ms a run costs here with its
 * JavaScript), plus the thread's CPU and a wake-up in each request's latency. So a tabular model is opened here first and
 * timed; when its run is short enough to be cheaper than the hop it stays here, otherwise (a large forest) it goes
 * to a worker thread like every other model, where a long run cannot stall HTTP.
 */

/** Larger files are not opened on the event loop at all: parsing them would stall requests for milliseconds. */
export const INLINE_MAX_FILE_BYTES = 1024 * 1024;
/** The longest run (the fastest of a few, on a zero row) kept on the event loop. */
export const INLINE_MAX_RUN_MS = 0.1;
const TIMED_RUNS = 30;
const TIMING_ATTEMPTS = 5;
const TIMING_PAUSE_MS = 250;

/**
 * An ONNX Runtime session on this thread for `file` when it is small and fast enough (see above); undefined
 * otherwise. One intra-op thread: a pool would only add wake-ups to runs this short.
 */
export async function openInlineSession(
  file: string,
  inputName: string,
  sampleShape: number[],
  limits = { maxFileBytes: INLINE_MAX_FILE_BYTES, maxRunMs: INLINE_MAX_RUN_MS },
): Promise<ort.InferenceSession | undefined> {
  if ((await fs.promises.stat(file)).size > limits.maxFileBytes) return undefined;
  const session = await ort.InferenceSession.create(file, {
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionProviders: ["cpu"],
  });
  if (!session.inputNames.includes(inputName)) return discard(session);
  const row = new Float32Array(sampleShape.reduce((a, b) => a * b, 1));
  // Wall time, so the loop's other work and other threads' load inflate it: when several models load at once
  // (a restart, the benchmark's publish) every one of 30 runs of the benchmark's 0.02 ms model took over 0.1 ms.
  // A few tries spaced out let that pass; a model that is really slow fails them all.
  for (let attempt = 0; attempt < TIMING_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, TIMING_PAUSE_MS));
    let fastest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < TIMED_RUNS; i++) {
      const t0 = performance.now();
      await session.run({ [inputName]: new ort.Tensor("float32", row, [1, ...sampleShape]) });
      fastest = Math.min(fastest, performance.now() - t0);
    }
    if (fastest <= limits.maxRunMs) return session;
  }
  return discard(session);
}

/** Not kept on the event loop: frees the native session; the caller loads the model on worker threads. */
async function discard(session: ort.InferenceSession): Promise<undefined> {
  await session.release();
  return undefined;
}
