import type * as ort from "onnxruntime-node";
import { PredictorClosed } from "./errors.js";
import type { JsonBytes } from "./json-encode.js";

/**
 * A loaded model as requests reach it: one interface, a few small classes behind it, one per placement (where a
 * prediction's work runs; placement.ts chooses, and tells how each kind of model runs).
 */

export type PlacementKind = "inline" | "threads" | "batching";

/** Batch size when none is configured, by the execution provider that actually runs the model. */
export const DEFAULT_MAX_BATCH = { cuda: 16, cpu: 1 } as const;
export type Provider = keyof typeof DEFAULT_MAX_BATCH;

export type Outputs = Record<string, ort.Tensor>;

export interface ImagePredictOptions {
  maxPixels: number;
  gradcamMaxSide: number;
  /** No Grad-CAM maps (batch scoring writes scores only; the benchmark measures the maps' cost this way). */
  noMaps?: boolean;
}

export interface Predictor {
  readonly placement: PlacementKind;
  /** The execution provider the model runs on. */
  readonly provider: Provider;
  /** Most samples per run of the graph (1: every request runs alone). */
  readonly maxBatch: number;
  /** Worker threads holding a session of the model (0: it runs on the event loop). */
  readonly threads: number;
  readonly outputNames: readonly string[];
  /** Image models: which JPEG decoder their threads use, for the log. */
  readonly jpegDecoder?: string;
  /**
   * One sample (the input tensor without its batch dimension) -> its outputs (batch dimension 1). owned: the
   * caller hands the buffer over (moved to a thread, not copied, and unusable after).
   */
  run(sample: Float32Array, owned?: boolean): Promise<Outputs>;
  /**
   * Image models: image bytes -> the 201 body as JSON bytes. Call `release` once the bytes are written and do not
   * touch them after (their memory may be a thread's reused answer slot). Decoding failures are the 413/415
   * refusals of the edge. The bytes are moved to a thread when they own their buffer, copied otherwise.
   */
  predictImage(bytes: Uint8Array, opts: ImagePredictOptions): Promise<JsonBytes>;
  /** Frees the sessions and threads once the requests already in hand have finished; later calls get PredictorClosed. */
  close(): Promise<void>;
}

/**
 * The closing rule every placement shares: a call after close() throws PredictorClosed (the cache then looks up
 * the model again), and `release` (threads ended, native sessions freed) runs once, when the last call in hand ends.
 */
export class InFlight {
  private active = 0;
  private closed = false;
  private released = false;

  constructor(private readonly release: () => Promise<void>) {}

  get isReleased(): boolean {
    return this.released;
  }

  /** Counts a call in; throws PredictorClosed once closed. Pair with end(). */
  begin(): void {
    if (this.closed) throw new PredictorClosed();
    this.active++;
  }

  /** Counts a call out; the last one out after close() starts the release. */
  end(): void {
    this.active--;
    if (this.closed && this.active === 0) void this.releaseOnce();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.active === 0) await this.releaseOnce();
  }

  private async releaseOnce(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.release();
  }
}
