import { Worker } from "node:worker_threads";
import type * as ort from "onnxruntime-node";
import type { Provider } from "./predictor.js";
import type { ModelThreadReply, ModelThreadSetup, SessionNames } from "./thread-messages.js";
import { sizeThreadHeaps } from "./worker-pool.js";

/**
 * Starting a model's threads (model-thread.ts), each with its own ONNX Runtime session of the model file: the
 * session options, the CUDA attempt and its fallback to CPU. The placements (placement-threads.ts,
 * placement-batching.ts) put the started threads in a WorkerPool.
 */

export interface ThreadSessionOptions {
  /** ORT_INTRA_OP_THREADS (0: ONNX Runtime's default). */
  intraOpThreads: number;
  /** Image models: what the whole-image job needs (model-thread.ts). */
  image?: ModelThreadSetup["image"];
}

function sessionOptions(o: ThreadSessionOptions, provider: Provider): ort.InferenceSession.SessionOptions {
  return {
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    ...(o.intraOpThreads > 0 ? { intraOpNumThreads: o.intraOpThreads } : {}),
    interOpNumThreads: 1,
    // ORT's pool threads spin-wait after each run by default; in a server they would take the cores the other
    // requests need for decoding and maps. Off: they sleep between runs.
    extra: { session: { intra_op: { allow_spinning: "0" } } },
    executionProviders: provider === "cuda" ? ["cuda", "cpu"] : ["cpu"],
  };
}

/** One thread with its session loaded on `provider`; rejects (the thread ended) when the session cannot load. */
export function startModelThread(
  file: string,
  provider: Provider,
  o: ThreadSessionOptions,
): Promise<{ worker: Worker; names: SessionNames }> {
  sizeThreadHeaps();
  const setup: ModelThreadSetup = { file, options: sessionOptions(o, provider), image: o.image };
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./model-thread.mjs", import.meta.url), { workerData: setup });
    worker.once("error", reject);
    worker.once("message", (m: ModelThreadReply) => {
      if (m.type === "loaded") {
        const { type: _, ...names } = m;
        resolve({ worker, names });
      } else {
        void worker.terminate();
        reject(new Error(m.type === "load-failed" ? m.message : "the model could not be loaded"));
      }
    });
  });
}

/**
 * The first thread, on CUDA when asked and it loads there, else on CPU. onnxruntime-node from npm ships the CPU
 * provider only: asking for CUDA without its provider libraries (or without a GPU) fails the load, and the model is
 * loaded again on CPU. What loaded decides the rest (placement.ts).
 */
export async function startFirstModelThread(
  file: string,
  o: ThreadSessionOptions & { cuda?: boolean },
): Promise<{ worker: Worker; names: SessionNames; provider: Provider }> {
  if (o.cuda) {
    try {
      return { ...(await startModelThread(file, "cuda", o)), provider: "cuda" };
    } catch {
      // no CUDA here: CPU below
    }
  }
  return { ...(await startModelThread(file, "cpu", o)), provider: "cpu" };
}

/** `count` more CPU threads; if any fails to load, the others are ended and the error thrown. */
export async function startMoreModelThreads(file: string, count: number, o: ThreadSessionOptions): Promise<Worker[]> {
  const more = await Promise.allSettled(Array.from({ length: count }, () => startModelThread(file, "cpu", o)));
  const started = more.flatMap((r) => (r.status === "fulfilled" ? [r.value.worker] : []));
  const failed = more.find((r) => r.status === "rejected");
  if (failed) {
    await Promise.all(started.map((w) => w.terminate()));
    throw failed.reason;
  }
  return started;
}
