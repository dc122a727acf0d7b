import { Worker } from "node:worker_threads";
import * as ort from "onnxruntime-node";

/**
 * One loaded ONNX model and the way requests reach it. onnxruntime-node's session.run() looks asynchronous
 * but runs the native inference synchronously inside a setImmediate, blocking the event loop for the whole
 * run; so each model's session lives on its own worker thread (inference-worker.ts) and the event loop only
 * posts tensors to it.
 *
 * Opportunistic batching: when a run is already in flight, requests that arrive meanwhile queue up and
 * go together as one run the moment it ends (up to maxBatch). A lone request never waits for company,
 * so latency at concurrency 1 is unchanged; under load a batch amortises per-run overhead. Only models whose
 * first input dimension is dynamic are batched.
 */

export interface SessionOptions {
  intraOpThreads: number;
  /** Most samples per run. Undefined: follows the provider that loaded the model (CUDA 16, CPU 1: no gain measured). */
  maxBatch?: number;
  /** Try the CUDA execution provider first (falls back to CPU when its libraries or a GPU are missing). */
  cuda?: boolean;
}

/** Batch size when none is configured, by the execution provider that actually runs the model. */
export const DEFAULT_MAX_BATCH = { cuda: 16, cpu: 1 } as const;
export type Provider = keyof typeof DEFAULT_MAX_BATCH;

type Outputs = Record<string, ort.Tensor>;
interface Pending {
  input: Float32Array;
  owned: boolean;
  resolve: (o: Outputs) => void;
  reject: (e: unknown) => void;
}

export class ModelSession {
  private queue: Pending[] = [];
  private running = false;
  private inFlight = 0;
  private closed = false;
  readonly batchable: boolean;
  /** How many samples each run carried (exposed for tests and the benchmark). */
  readonly batchSizes: number[] = [];

  private readonly pending = new Map<number, { resolve: (o: Outputs) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private constructor(
    private readonly worker: Worker,
    readonly inputName: string,
    readonly sampleShape: number[],
    /** The execution provider the model was loaded with. */
    readonly provider: Provider,
    readonly maxBatch: number,
    private readonly names: { inputs: string[]; outputs: string[]; inputShapes: Record<string, Array<number | string> | null> },
  ) {
    const first = names.inputShapes[inputName]?.[0];
    this.batchable = maxBatch > 1 && (typeof first === "string" || first === -1 || first === undefined);
    worker.on("message", (m: { id?: number; outputs?: Record<string, { data: Float32Array; dims: number[] }>; error?: string }) => {
      if (m.id === undefined) return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error));
      else p.resolve(Object.fromEntries(Object.entries(m.outputs!).map(([k, v]) => [k, new ort.Tensor("float32", v.data, v.dims)])));
    });
    worker.on("error", (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  static async load(file: string, inputName: string, sampleShape: number[], opts: SessionOptions): Promise<ModelSession> {
    const base: ort.InferenceSession.SessionOptions = {
      graphOptimizationLevel: "all",
      executionMode: "sequential",
      ...(opts.intraOpThreads > 0 ? { intraOpNumThreads: opts.intraOpThreads } : {}),
      interOpNumThreads: 1,
      // ORT's pool threads spin-wait after each run by default; in a server they would take the cores the
      // event loop needs for HTTP, decoding and maps. Off: they sleep between runs.
      extra: { session: { intra_op: { allow_spinning: "0" } } },
    };
    const tryLoad = (options: ort.InferenceSession.SessionOptions) =>
      new Promise<{ worker: Worker; names: { inputs: string[]; outputs: string[]; inputShapes: Record<string, Array<number | string> | null> } }>((resolve, reject) => {
        const worker = new Worker(new URL("./inference-worker.mjs", import.meta.url), { workerData: { file, options } });
        worker.once("error", reject);
        worker.once("message", (m: { type: string; error?: string; inputNames: string[]; outputNames: string[]; inputShapes: Record<string, Array<number | string> | null> }) => {
          if (m.type === "loaded") resolve({ worker, names: { inputs: m.inputNames, outputs: m.outputNames, inputShapes: m.inputShapes } });
          else {
            void worker.terminate();
            reject(new Error(m.error ?? "the model could not be loaded"));
          }
        });
      });
    // onnxruntime-node from npm ships the CPU provider only: asking for CUDA without its provider libraries (or
    // without a GPU) fails the load, and the model is loaded again on CPU. Batching follows what did load.
    let loaded;
    let provider: Provider = "cpu";
    if (opts.cuda) {
      try {
        loaded = await tryLoad({ ...base, executionProviders: ["cuda", "cpu"] });
        provider = "cuda";
      } catch {
        loaded = await tryLoad({ ...base, executionProviders: ["cpu"] });
      }
    } else loaded = await tryLoad({ ...base, executionProviders: ["cpu"] });
    loaded.worker.unref();
    const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH[provider];
    const session = new ModelSession(loaded.worker, inputName, sampleShape, provider, maxBatch, loaded.names);
    if (!loaded.names.inputs.includes(inputName)) {
      await session.close();
      throw new Error(`the model has no input named ${inputName} (it has ${loaded.names.inputs.join(", ")})`);
    }
    return session;
  }

  get outputNames(): readonly string[] {
    return this.names.outputs;
  }

  /**
   * Runs one sample (the tensor without its batch dimension); resolves to that sample's outputs (batch dim 1).
   * owned: the caller hands the buffer over (it is moved to the worker thread, not copied, and unusable after).
   */
  run(input: Float32Array, owned = false): Promise<Outputs> {
    if (this.closed) return Promise.reject(new SessionClosed());
    return new Promise((resolve, reject) => {
      this.queue.push({ input, owned, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length) {
      const take = this.batchable ? Math.min(this.queue.length, this.maxBatch) : 1;
      const batch = this.queue.splice(0, take);
      this.inFlight++;
      try {
        const outs = await this.runBatch(batch.map((p) => p.input), batch.length === 1 && batch[0].owned);
        batch.forEach((p, i) => p.resolve(outs[i]));
      } catch (err) {
        batch.forEach((p) => p.reject(err));
      } finally {
        this.inFlight--;
      }
    }
    this.running = false;
    if (this.closed) await this.releaseNow();
  }

  private async runBatch(inputs: Float32Array[], owned: boolean): Promise<Outputs[]> {
    const n = inputs.length;
    this.batchSizes.push(n);
    if (this.batchSizes.length > 10_000) this.batchSizes.splice(0, 5_000);
    const per = inputs[0].length;
    const data = n === 1 ? inputs[0] : new Float32Array(per * n);
    if (n > 1) inputs.forEach((x, i) => data.set(x, i * per));
    const id = this.nextId++;
    const out = await new Promise<Outputs>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A batch buffer is ours and a handed-over input is the caller's gift: both move to the worker (a 224x224
      // RGB tensor is 600 KB to copy otherwise). Any other input may be a view the caller still holds: copied.
      const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
      const transfer = (n > 1 || owned) && whole ? [data.buffer as ArrayBuffer] : [];
      this.worker.postMessage({ id, input: this.inputName, data, dims: [n, ...this.sampleShape] }, transfer);
    });
    if (n === 1) return [out];
    // Split every output along its first (batch) dimension.
    const results: Outputs[] = Array.from({ length: n }, () => ({}));
    for (const [name, t] of Object.entries(out)) {
      const dims = t.dims as readonly number[];
      const size = dims.slice(1).reduce((a, b) => a * b, 1);
      const src = t.data as Float32Array;
      for (let i = 0; i < n; i++) results[i][name] = new ort.Tensor("float32", src.slice(i * size, (i + 1) * size), [1, ...dims.slice(1)]);
    }
    return results;
  }

  /** Releases native memory once queued and running requests have finished. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.running) await this.releaseNow();
  }

  private released = false;
  private async releaseNow(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.worker.terminate().catch(() => undefined); // ends the thread and frees the native session
  }
}

/** The session was unloaded (evicted or replaced) before this request reached it: ask the cache again. */
export class SessionClosed extends Error {
  constructor() {
    super("the model was unloaded");
  }
}
