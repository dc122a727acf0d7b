import os from "node:os";
import v8 from "node:v8";
import { Worker } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { ApiError } from "../errors.js";
import { refuse } from "../net/outbound-guard.js";
import type { ServedManifest } from "./manifest.js";

/**
 * One loaded ONNX model and the way requests reach it. onnxruntime-node's session.run() looks asynchronous
 * but runs the native inference synchronously inside a setImmediate, blocking the event loop for the whole
 * run; so the model's sessions live on worker threads (inference-worker.ts) and the event loop only posts
 * bytes to them. A model has `replicas` such threads, each with its own session (CPU: one per core, up to 4 by
 * default): an image prediction goes whole to the least busy one (decode, resize, run, maps, JSON), so requests
 * run in parallel on all cores and the event loop only routes, authenticates and writes bytes.
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
  /** Worker threads (sessions) on CPU; default min(4, cores). CUDA loads one session (batches instead). */
  replicas?: number;
  /** Image models: the image pipeline runs on the worker threads (predictImage). jpegDecoder: see jpeg-turbo.ts. */
  image?: { manifest: ServedManifest; classes: Record<string, string>; jpegDecoder?: "auto" | "sharp" };
}

/** Default CPU replicas: one per core, at most 4 (each holds a copy of the model in memory). */
export const defaultReplicas = () => Math.max(1, Math.min(4, os.availableParallelism()));

interface Replica {
  worker: Worker;
  busy: number;
  /** The thread's answer slots (shared memory), as it sent them. */
  slots: SharedArrayBuffer[];
}
type Names = { inputs: string[]; outputs: string[]; inputShapes: Record<string, Array<number | string> | null>; jpegDecoder?: string };
type Reply = {
  id?: number;
  outputs?: Record<string, { data: Float32Array; dims: number[] }>;
  body?: ArrayBuffer;
  slot?: number;
  shared?: SharedArrayBuffer;
  length?: number;
  error?: string;
  status?: number;
  code?: string;
  details?: Record<string, unknown>;
  refusal?: boolean;
};

/**
 * The heap of every V8 isolate created from now on (the inference threads'; the event loop's already exists) is
 * sized for a thread that allocates a few MB of short-lived buffers per request. V8 reads these flags when an
 * isolate is created, so setting them before the threads start is enough. Measured by bench/serve/worker-gc.ts and
 * bench/serve/idle-gc.ts:
 * - The young generation starts at 8 MB instead of Node's 2 MB. With the small default, an image thread ran a full
 *   mark-compact about every 15 requests on its 12 MB heap (61-89 in 20 s at concurrency 1, "allocation limit"
 *   reached; 4 MB did the same) and each one paused that request by 2-20 ms: the c=1 tail. With 8 MB: one in 20 s.
 * - The old generation's first limit is 64 MB instead of V8's own small one. V8 starts incremental marking once the
 *   old generation's room left is no larger than the new space, and with 8 MB semi-spaces that room (15-16 MB on a
 *   12 MB heap) was always short: after a thread had idled 12 s, it ran 139 mark-compacts in the next 60 s at c=1
 *   (3.5 ms each, in some request's latency; p99/median 2.37). With 64 MB: none in 60 s, p99/median 1.62. 32 and 48
 *   MB still gave 24 and 16 in 12 s. The limit is room to grow, not memory taken (docs/prediction.md has the RSS).
 * - No memory reducer. It runs full mark-compacts on a heap that has gone quiet, to give memory back: with four
 *   models loaded, the threads of the models not being called ran 25 of them (13-47 ms each, 280-340 ms in all) in 15
 *   s while one model served at c=1, each holding one of the two cores away from the request in hand (CamNet's c=1
 *   p99/median 2.00-2.10; without it, no collection on those threads and 1.58-1.77). A thread's heap is 6-14 MB, so
 *   what the reducer would give back is small.
 */
let threadHeapSized = false;
function sizeThreadHeap(): void {
  if (threadHeapSized) return;
  v8.setFlagsFromString("--min-semi-space-size=8");
  v8.setFlagsFromString("--initial-old-space-size=64");
  v8.setFlagsFromString("--no-memory-reducer");
  threadHeapSized = true;
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
  private closed = false;
  readonly batchable: boolean;
  /** How many samples each run carried (exposed for tests and the benchmark). */
  readonly batchSizes: number[] = [];

  private readonly pending = new Map<number, { replica: Replica; resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private constructor(
    private readonly replicas: Replica[],
    readonly inputName: string,
    readonly sampleShape: number[],
    /** The execution provider the model was loaded with. */
    readonly provider: Provider,
    readonly maxBatch: number,
    private readonly names: Names,
    /** Loaded with SessionOptions.image: the threads can run whole image predictions. */
    readonly imagePipeline: boolean,
    /** A tiny tabular model's session on the event loop itself (inline-session.ts); no threads then. */
    private readonly inline?: ort.InferenceSession,
  ) {
    const first = names.inputShapes[inputName]?.[0];
    this.batchable = maxBatch > 1 && (typeof first === "string" || first === -1 || first === undefined);
    for (const r of replicas) {
      r.worker.on("message", (m: Reply) => {
        if (m.id === undefined) return;
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        r.busy--;
        p.resolve(m);
      });
      r.worker.on("error", (err) => {
        // A crashed thread fails its own jobs and takes no more.
        r.busy = Number.POSITIVE_INFINITY;
        for (const [id, p] of this.pending)
          if (p.replica === r) {
            this.pending.delete(id);
            p.reject(err);
          }
      });
    }
  }

  static async load(file: string, inputName: string, sampleShape: number[], opts: SessionOptions): Promise<ModelSession> {
    const base: ort.InferenceSession.SessionOptions = {
      graphOptimizationLevel: "all",
      executionMode: "sequential",
      ...(opts.intraOpThreads > 0 ? { intraOpNumThreads: opts.intraOpThreads } : {}),
      interOpNumThreads: 1,
      // ORT's pool threads spin-wait after each run by default; in a server they would take the cores the
      // other requests need for decoding and maps. Off: they sleep between runs.
      extra: { session: { intra_op: { allow_spinning: "0" } } },
    };
    const workerData = (options: ort.InferenceSession.SessionOptions) => ({ file, options, ...(opts.image ?? {}) });
    sizeThreadHeap();
    const tryLoad = (options: ort.InferenceSession.SessionOptions) =>
      new Promise<{ worker: Worker; names: Names }>((resolve, reject) => {
        const worker = new Worker(new URL("./inference-worker.mjs", import.meta.url), { workerData: workerData(options) });
        worker.once("error", reject);
        worker.once(
          "message",
          (m: {
            type: string;
            error?: string;
            inputNames: string[];
            outputNames: string[];
            inputShapes: Names["inputShapes"];
            jpegDecoder?: string;
          }) => {
            if (m.type === "loaded")
              resolve({
                worker,
                names: { inputs: m.inputNames, outputs: m.outputNames, inputShapes: m.inputShapes, jpegDecoder: m.jpegDecoder },
              });
            else {
              void worker.terminate();
              reject(new Error(m.error ?? "the model could not be loaded"));
            }
          },
        );
      });
    // onnxruntime-node from npm ships the CPU provider only: asking for CUDA without its provider libraries (or
    // without a GPU) fails the load, and the model is loaded again on CPU. Batching follows what did load.
    let first;
    let provider: Provider = "cpu";
    const cpu = { ...base, executionProviders: ["cpu"] };
    if (opts.cuda) {
      try {
        first = await tryLoad({ ...base, executionProviders: ["cuda", "cpu"] });
        provider = "cuda";
      } catch {
        first = await tryLoad(cpu);
      }
    } else first = await tryLoad(cpu);
    const count = provider === "cuda" ? 1 : Math.max(1, opts.replicas ?? defaultReplicas());
    const more = await Promise.allSettled(Array.from({ length: count - 1 }, () => tryLoad(cpu)));
    const workers = [first.worker, ...more.flatMap((r) => (r.status === "fulfilled" ? [r.value.worker] : []))];
    for (const w of workers) w.unref();
    const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH[provider];
    const session = new ModelSession(
      workers.map((worker) => ({ worker, busy: 0, slots: [] })),
      inputName,
      sampleShape,
      provider,
      maxBatch,
      first.names,
      !!opts.image,
    );
    const failed = more.find((r) => r.status === "rejected");
    if (failed) {
      await session.close();
      throw failed.reason;
    }
    if (!first.names.inputs.includes(inputName)) {
      await session.close();
      throw new Error(`the model has no input named ${inputName} (it has ${first.names.inputs.join(", ")})`);
    }
    return session;
  }

  /** A session that runs on this thread (see inline-session.ts): unbatched, no worker threads. */
  static onEventLoop(session: ort.InferenceSession, inputName: string, sampleShape: number[]): ModelSession {
    const shapes = Object.fromEntries(session.inputMetadata.map((m) => [m.name, m.isTensor ? [...m.shape] : null]));
    const names = { inputs: [...session.inputNames], outputs: [...session.outputNames], inputShapes: shapes };
    return new ModelSession([], inputName, sampleShape, "cpu", 1, names, false, session);
  }

  get outputNames(): readonly string[] {
    return this.names.outputs;
  }

  /** Image models: which JPEG decoder the threads use ("libjpeg-turbo (...)" or "sharp (why)"), for the log. */
  get jpegDecoder(): string | undefined {
    return this.names.jpegDecoder;
  }

  /** Worker threads (each with its own session) this model runs on. */
  get threads(): number {
    return this.replicas.length;
  }

  /** Posts one job to the least busy replica; resolves to its reply (and the replica that gave it). */
  private post(message: Record<string, unknown>, transfer: ArrayBuffer[]): Promise<{ reply: Reply; replica: Replica }> {
    const replica = this.replicas.reduce((best, r) => (r.busy < best.busy ? r : best));
    if (!Number.isFinite(replica.busy)) return Promise.reject(new Error("the model's worker threads have stopped"));
    const id = this.nextId++;
    replica.busy++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { replica, resolve: (reply) => resolve({ reply, replica }), reject });
      replica.worker.postMessage({ ...message, id }, transfer);
    });
  }

  /**
   * A whole image prediction on a worker thread: image bytes in, the 201 body's JSON bytes out. The bytes are
   * moved to the thread when they own their buffer (a decoded data: URI does), copied otherwise.
   * Decoding failures come back as the same 413/415 refusals the event loop would have raised.
   * release() hands the answer's memory back to its thread for the next answer: call it once the bytes are
   * written, and do not touch them after. A thread has a few such slots; while none is free it answers in
   * buffers of its own, so a release never called costs one slot, not correctness.
   */
  async predictImage(
    bytes: Uint8Array,
    opts: { maxPixels: number; gradcamMaxSide: number; noMaps?: boolean },
  ): Promise<{ bytes: Uint8Array; release: () => void }> {
    if (this.closed) throw new SessionClosed();
    if (!this.imagePipeline) throw new Error("this session was loaded without SessionOptions.image: it runs tensors only");
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const image = whole ? bytes : new Uint8Array(bytes);
    this.inFlight++;
    try {
      const { reply: r, replica } = await this.post({ image, opts }, [image.buffer as ArrayBuffer]);
      if (r.error !== undefined) {
        if (r.status === undefined) throw new Error(r.error);
        throw r.refusal ? refuse(r.status, r.code!, r.error, r.details) : new ApiError(r.status, r.code!, r.error, r.details);
      }
      if (r.slot === undefined) return { bytes: new Uint8Array(r.body!, 0, r.length), release: () => undefined };
      // The answer sits in one of the thread's shared slots: read in place, freed for the thread's next answer.
      const slot = r.slot;
      if (r.shared) replica.slots[slot] = r.shared;
      let freed = false;
      const release = () => {
        if (freed || this.released) return;
        freed = true;
        replica.worker.postMessage({ free: slot });
      };
      return { bytes: new Uint8Array(replica.slots[slot], 0, r.length), release };
    } finally {
      this.inFlight--;
      if (this.closed && !this.running && this.inFlight === 0) await this.releaseNow();
    }
  }

  private inFlight = 0;

  /**
   * Runs one sample (the tensor without its batch dimension); resolves to that sample's outputs (batch dim 1).
   * owned: the caller hands the buffer over (it is moved to the worker thread, not copied, and unusable after).
   */
  run(input: Float32Array, owned = false): Promise<Outputs> {
    if (this.closed) return Promise.reject(new SessionClosed());
    if (this.inline) return this.runInline(this.inline, input);
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
      try {
        const outs = await this.runBatch(
          batch.map((p) => p.input),
          batch.length === 1 && batch[0].owned,
        );
        batch.forEach((p, i) => p.resolve(outs[i]));
      } catch (err) {
        batch.forEach((p) => p.reject(err));
      }
    }
    this.running = false;
    if (this.closed && this.inFlight === 0) await this.releaseNow();
  }

  private async runInline(session: ort.InferenceSession, input: Float32Array): Promise<Outputs> {
    this.inFlight++;
    try {
      return await session.run({ [this.inputName]: new ort.Tensor("float32", input, [1, ...this.sampleShape]) });
    } finally {
      this.inFlight--;
      if (this.closed && this.inFlight === 0) await this.releaseNow();
    }
  }

  private async runBatch(inputs: Float32Array[], owned: boolean): Promise<Outputs[]> {
    const n = inputs.length;
    this.batchSizes.push(n);
    if (this.batchSizes.length > 10_000) this.batchSizes.splice(0, 5_000);
    const per = inputs[0].length;
    const data = n === 1 ? inputs[0] : new Float32Array(per * n);
    if (n > 1) inputs.forEach((x, i) => data.set(x, i * per));
    // A batch buffer is ours and a handed-over input is the caller's gift: both move to the worker (a 224x224
    // RGB tensor is 600 KB to copy otherwise). Any other input may be a view the caller still holds: copied.
    const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const transfer = (n > 1 || owned) && whole ? [data.buffer as ArrayBuffer] : [];
    const { reply: r } = await this.post({ input: this.inputName, data, dims: [n, ...this.sampleShape] }, transfer);
    if (r.error !== undefined) throw new Error(r.error);
    const out = Object.fromEntries(Object.entries(r.outputs!).map(([k, v]) => [k, new ort.Tensor("float32", v.data, v.dims)]));
    if (n === 1) return [out];
    // Split every output along its first (batch) dimension.
    const results: Outputs[] = Array.from({ length: n }, () => ({}));
    for (const [name, t] of Object.entries(out)) {
      const dims = t.dims;
      const size = dims.slice(1).reduce((a, b) => a * b, 1);
      const src = t.data;
      for (let i = 0; i < n; i++) results[i][name] = new ort.Tensor("float32", src.slice(i * size, (i + 1) * size), [1, ...dims.slice(1)]);
    }
    return results;
  }

  /** Releases native memory once queued and running requests have finished. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.running && this.inFlight === 0) await this.releaseNow();
  }

  private released = false;
  private async releaseNow(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // Ends the threads and frees the native sessions.
    await Promise.all(this.replicas.map((r) => r.worker.terminate().catch(() => undefined)));
    await this.inline?.release().catch(() => undefined);
  }
}

/** The session was unloaded (evicted or replaced) before this request reached it: ask the cache again. */
export class SessionClosed extends Error {
  constructor() {
    super("the model was unloaded");
  }
}
