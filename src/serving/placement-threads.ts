import type { Worker } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { noteDescriptors } from "./image-descriptors.js";
import { noteInputCheck } from "./input-check.js";
import { JsonBytes } from "./json-encode.js";
import { InFlight, type ImagePredictOptions, type Outputs, type PlacementKind, type Predictor, type Provider } from "./predictor.js";
import { ownBuffer, type ModelThreadJob, type ModelThreadNotice, type ModelThreadReply, type SessionNames } from "./thread-messages.js";
import { WorkerPool } from "./worker-pool.js";

/**
 * The "threads" placement: every request goes whole to the least busy of the model's threads, one ONNX Runtime
 * session each. An image prediction is the whole request there (decode, resize, normalise, run, maps or boxes, the
 * answer's JSON: model-thread.ts), so requests run in parallel on all cores while the event loop only routes,
 * authenticates and writes bytes. A tabular run (a model too large for the event loop) is one tensor there.
 */
export class ThreadsPredictor implements Predictor {
  readonly placement: PlacementKind = "threads";
  readonly maxBatch = 1;
  private readonly pool: WorkerPool<ModelThreadJob, ModelThreadReply>;
  /** Per thread, its shared answer slots as it sent them (an image answer is read there in place). */
  private readonly slots = new Map<Worker, SharedArrayBuffer[]>();
  private readonly inFlight: InFlight;

  constructor(
    workers: Worker[],
    private readonly names: SessionNames,
    private readonly inputName: string,
    private readonly sampleShape: number[],
    readonly provider: Provider,
    /** Image models: the threads were started with the whole-image job's setup. */
    private readonly images: boolean,
  ) {
    this.pool = new WorkerPool({ threads: workers });
    for (const w of workers) this.slots.set(w, []);
    this.inFlight = new InFlight(() => this.pool.close());
  }

  get threads(): number {
    return this.pool.size;
  }

  get outputNames(): readonly string[] {
    return this.names.outputNames;
  }

  get jpegDecoder(): string | undefined {
    return this.names.jpegDecoder;
  }

  async predictImage(bytes: Uint8Array, opts: ImagePredictOptions): Promise<JsonBytes> {
    if (!this.images) throw new Error("this model takes rows, not images");
    this.inFlight.begin();
    try {
      const image = ownBuffer(bytes);
      const { reply: r, worker } = await this.pool.post({ type: "predict-image", image, opts }, [image.buffer]);
      if (r.type === "answer") {
        const body = new JsonBytes(new Uint8Array(r.body, 0, r.length), () => undefined); // nothing to give back
        noteInputCheck(body, r.inputCheck);
        noteDescriptors(body, r.descriptors);
        return body;
      }
      if (r.type !== "answer-in-slot") throw new Error(`unexpected reply from a model thread: ${r.type}`);
      // The answer sits in one of the thread's shared slots: read in place, freed for the thread's next answer.
      const slots = this.slots.get(worker)!;
      if (r.shared) slots[r.slot] = r.shared;
      let freed = false;
      const release = () => {
        if (freed || this.inFlight.isReleased) return;
        freed = true;
        worker.postMessage({ type: "free-slot", slot: r.slot } satisfies ModelThreadNotice);
      };
      const body = new JsonBytes(new Uint8Array(slots[r.slot], 0, r.length), release);
      noteInputCheck(body, r.inputCheck);
      noteDescriptors(body, r.descriptors);
      return body;
    } finally {
      this.inFlight.end();
    }
  }

  async run(sample: Float32Array, owned = false): Promise<Outputs> {
    return (await this.runTensor([sample], owned))[0];
  }

  /**
   * Several samples as one run of the graph (the batching placement's use; one sample here); resolves to each
   * sample's outputs. owned: a single sample's buffer is the caller's gift and moves to the thread.
   */
  async runTensor(samples: Float32Array[], owned: boolean): Promise<Outputs[]> {
    this.inFlight.begin();
    try {
      return await this.runOnThread(samples, owned);
    } finally {
      this.inFlight.end();
    }
  }

  private async runOnThread(samples: Float32Array[], owned: boolean): Promise<Outputs[]> {
    const n = samples.length;
    const per = samples[0].length;
    const data = n === 1 ? samples[0] : new Float32Array(per * n);
    if (n > 1) samples.forEach((x, i) => data.set(x, i * per));
    // A batch buffer is ours and a handed-over input is the caller's gift: both move to the thread (a 224x224 RGB
    // tensor is 600 KB to copy otherwise). Any other input may be a view the caller still holds: copied.
    const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const transfer = (n > 1 || owned) && whole ? [data.buffer as ArrayBuffer] : [];
    const { reply: r } = await this.pool.post({ type: "run", input: this.inputName, data, dims: [n, ...this.sampleShape] }, transfer);
    if (r.type !== "outputs") throw new Error(`unexpected reply from a model thread: ${r.type}`);
    const out = Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, new ort.Tensor("float32", v.data, v.dims)]));
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

  close(): Promise<void> {
    return this.inFlight.close();
  }
}
