import fs from "node:fs";
import * as ort from "onnxruntime-node";
import type { JsonBytes } from "./json-encode.js";
import { InFlight, type Outputs, type PlacementKind, type Predictor, type Provider } from "./predictor.js";

/**
 * The "inline" placement: a tiny tabular model runs on the event loop, not on a worker thread. A typical tabular run
 * costs the native engine a few microseconds; handing it to a thread costs the event loop about as much (posting the
 * row, waking the thread, receiving and rebuilding the outputs: an estimate, as is the ~0.02 ms a run costs here with
 * its JavaScript), plus the thread's CPU and a wake-up in each request's latency. So a tabular model is opened here
 * first and timed (InlinePredictor.open); when its run is short enough to be cheaper than the hop it stays here,
 * otherwise (a large forest) it goes to a worker thread like every other model, where a long run cannot stall HTTP.
 */

export interface InlineLimits {
  /** Larger files are not opened on the event loop at all: parsing them would stall requests for milliseconds. */
  maxFileBytes: number;
  /** The longest run (the fastest of a few, on a zero row) kept on the event loop. */
  maxRunMs: number;
}

export const INLINE_LIMITS: InlineLimits = { maxFileBytes: 1024 * 1024, maxRunMs: 0.1 };
const TIMED_RUNS = 30;
const TIMING_ATTEMPTS = 5;
const TIMING_PAUSE_MS = 250;

export class InlinePredictor implements Predictor {
  readonly placement: PlacementKind = "inline";
  readonly provider: Provider = "cpu";
  readonly maxBatch = 1;
  readonly threads = 0;
  private readonly inFlight: InFlight;
  private readonly dims: number[];

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly inputName: string,
    sampleShape: number[],
  ) {
    this.dims = [1, ...sampleShape];
    this.inFlight = new InFlight(() => session.release().catch(() => undefined));
  }

  /**
   * The model on the event loop when its file is small and its run fast enough (see above); undefined otherwise.
   * One intra-op thread: a pool would only add wake-ups to runs this short.
   */
  static async open(file: string, inputName: string, sampleShape: number[], limits = INLINE_LIMITS): Promise<InlinePredictor | undefined> {
    if ((await fs.promises.stat(file)).size > limits.maxFileBytes) return undefined;
    const session = await ort.InferenceSession.create(file, {
      graphOptimizationLevel: "all",
      executionMode: "sequential",
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionProviders: ["cpu"],
    });
    if (session.inputNames.includes(inputName) && (await runsFastEnough(session, inputName, sampleShape, limits.maxRunMs)))
      return new InlinePredictor(session, inputName, sampleShape);
    // Not kept on the event loop: the native session is freed, and the model goes to a worker thread.
    await session.release();
    return undefined;
  }

  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  async run(sample: Float32Array): Promise<Outputs> {
    this.inFlight.begin();
    try {
      return await this.session.run({ [this.inputName]: new ort.Tensor("float32", sample, this.dims) });
    } finally {
      this.inFlight.end();
    }
  }

  predictImage(): Promise<JsonBytes> {
    return Promise.reject(new Error("this model takes rows, not images"));
  }

  close(): Promise<void> {
    return this.inFlight.close();
  }
}

/**
 * Wall time, so the loop's other work and other threads' load inflate it: when several models load at once (a
 * restart, the benchmark's publish) every one of 30 runs of the benchmark's 0.02 ms model took over 0.1 ms. A few
 * tries spaced out let that pass; a model that is really slow fails them all.
 */
async function runsFastEnough(session: ort.InferenceSession, inputName: string, sampleShape: number[], maxRunMs: number): Promise<boolean> {
  const row = new Float32Array(sampleShape.reduce((a, b) => a * b, 1));
  for (let attempt = 0; attempt < TIMING_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, TIMING_PAUSE_MS));
    let fastest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < TIMED_RUNS; i++) {
      const t0 = performance.now();
      await session.run({ [inputName]: new ort.Tensor("float32", row, [1, ...sampleShape]) });
      fastest = Math.min(fastest, performance.now() - t0);
    }
    if (fastest <= maxRunMs) return true;
  }
  return false;
}
