import { imageAnswer } from "./image-answer.js";
import { noteDescriptors } from "./image-descriptors.js";
import { featureProjection, imageFinding, noteInputCheck } from "./input-check.js";
import { encodeJson, JsonBytes } from "./json-encode.js";
import { classNames, type ServedManifest } from "./manifest.js";
import type { ThreadsPredictor } from "./placement-threads.js";
import { InFlight, type ImagePredictOptions, type Outputs, type PlacementKind, type Predictor } from "./predictor.js";
import { preprocessImage } from "./preprocess.js";

interface Queued {
  input: Float32Array;
  owned: boolean;
  resolve: (o: Outputs) => void;
  reject: (e: unknown) => void;
}

/**
 * The "batching" placement (CUDA, or SERVING_MAX_BATCH set, for a model whose batch dimension is dynamic):
 * opportunistic batching on one model thread. While a run is in flight, the samples that arrive meanwhile queue up
 * and go together as one run the moment it ends (up to maxBatch). A lone request never waits for company, so the
 * latency at concurrency 1 is unchanged; under load a batch amortises the per-run cost (a GPU's above all). The
 * tensors must be on this side to be stacked: an image is preprocessed on a preprocessing thread
 * (preprocess-pool.ts), run in a batch, and its answer built here.
 */
export class BatchingPredictor implements Predictor {
  readonly placement: PlacementKind = "batching";
  /** How many samples each run carried (for tests and the benchmark; the most recent 5,000-10,000). */
  readonly batchSizes: number[] = [];
  private queue: Queued[] = [];
  private running = false;
  private readonly inFlight: InFlight;
  private readonly classes: Record<string, string>;

  constructor(
    /** The model's one thread; this class only decides what goes to it together. */
    private readonly thread: ThreadsPredictor,
    private readonly manifest: ServedManifest,
    readonly maxBatch: number,
    /** JPEG_DECODER, for the preprocessing threads. */
    private readonly jpegChoice?: "auto" | "sharp",
  ) {
    this.inFlight = new InFlight(() => thread.close());
    this.classes = classNames(manifest);
  }

  get provider() {
    return this.thread.provider;
  }

  get threads(): number {
    return this.thread.threads;
  }

  get outputNames(): readonly string[] {
    return this.thread.outputNames;
  }

  get jpegDecoder(): string | undefined {
    return this.thread.jpegDecoder;
  }

  async run(sample: Float32Array, owned = false): Promise<Outputs> {
    this.inFlight.begin();
    try {
      return await this.enqueue(sample, owned);
    } finally {
      this.inFlight.end();
    }
  }

  async predictImage(bytes: Uint8Array, o: ImagePredictOptions): Promise<JsonBytes> {
    const spec = this.manifest.input.image;
    if (!spec) throw new Error("this model takes rows, not images");
    this.inFlight.begin();
    try {
      const pre = await preprocessImage(bytes, spec, o.maxPixels, this.jpegChoice);
      const out = await this.enqueue(pre.tensor, true); // the tensor is ours to hand over
      const body = new JsonBytes(encodeJson(imageAnswer(this.manifest, this.classes, out, pre, o)));
      noteInputCheck(body, imageFinding(this.manifest, out));
      const features = featureProjection(this.manifest, out);
      if (features && pre.descriptors) pre.descriptors.features = features;
      noteDescriptors(body, pre.descriptors);
      return body;
    } finally {
      this.inFlight.end();
    }
  }

  private enqueue(input: Float32Array, owned: boolean): Promise<Outputs> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, owned, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.batchSizes.push(batch.length);
      if (this.batchSizes.length > 10_000) this.batchSizes.splice(0, 5_000);
      try {
        const outs = await this.thread.runTensor(
          batch.map((q) => q.input),
          batch.length === 1 && batch[0].owned,
        );
        batch.forEach((q, i) => q.resolve(outs[i]));
      } catch (err) {
        batch.forEach((q) => q.reject(err));
      }
    }
    this.running = false;
  }

  close(): Promise<void> {
    return this.inFlight.close();
  }
}
