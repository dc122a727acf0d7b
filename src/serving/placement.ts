import os from "node:os";
import { classNames, type ServedManifest } from "./manifest.js";
import { BatchingPredictor } from "./placement-batching.js";
import { InlinePredictor, INLINE_LIMITS, type InlineLimits } from "./placement-inline.js";
import { ThreadsPredictor } from "./placement-threads.js";
import { startFirstModelThread, startMoreModelThreads } from "./model-threads.js";
import { DEFAULT_MAX_BATCH, type Predictor, type Provider } from "./predictor.js";

/**
 * How each kind of model runs: decided once, when a model loads, into one of three placements behind one Predictor
 * interface (predictor.ts). The request's way through each:
 *
 * | placement | which models | a request's way |
 * |---|---|---|
 * | inline (placement-inline.ts) | tabular, file ≤ 1 MB and a run ≤ 0.1 ms here | row checked, ONNX Runtime on the event loop itself |
 * | threads (placement-threads.ts) | image models on CPU; larger tabular models | the whole request on the least busy of the model's threads (images: decode, resize, normalise, run, maps or boxes, JSON) |
 * | batching (placement-batching.ts) | CUDA, or SERVING_MAX_BATCH > 1, when the graph's batch dimension is dynamic; never detection | images preprocessed on a preprocessing thread, runs stacked on the model's one thread, the answer built on the event loop |
 *
 * Threads per model: on CPU one per core (at most four; SERVING_THREADS_PER_MODEL), each holding a copy of the
 * model, for image models; one for tabular models and for batching (a batch runs one at a time). Detection is never
 * batched: its graph is exported for one image at a time (pipelines/builder_pipelines/detection/export.py).
 */

export interface PlacementConfig {
  /** ORT_INTRA_OP_THREADS (0: ONNX Runtime's default). */
  intraOpThreads: number;
  /** SERVING_MAX_BATCH; undefined: by the provider that loaded the model (CUDA 16, CPU 1: no gain measured on CPU). */
  maxBatch?: number;
  /** SERVING_THREADS_PER_MODEL for image models on CPU; undefined: defaultThreads(). */
  threads?: number;
  /** JPEG_DECODER: libjpeg-turbo where the host has it ("auto"), or always sharp. */
  jpegDecoder?: "auto" | "sharp";
  /** Try the CUDA execution provider first (a GPU device is there). */
  cuda?: boolean;
  /** The bounds for the event loop; false: never inline (tests compare placements). */
  inline?: InlineLimits | false;
}

/** What is known of a model when its placement is chosen. */
export interface PlacementFacts {
  /** It passed InlinePredictor.open's bounds. */
  fitsInline: boolean;
  /** The execution provider its first session loaded on. */
  provider: Provider;
  /** The graph's first input dimension is dynamic (a batch of any size can run). */
  dynamicBatch: boolean;
}

export type Placement = { kind: "inline" } | { kind: "threads"; threads: number } | { kind: "batching"; maxBatch: number };

/** Default CPU threads per image model: one per core, at most 4 (each holds a copy of the model in memory). */
export const defaultThreads = () => Math.max(1, Math.min(4, os.availableParallelism()));

/** The rule of the table above. */
export function choosePlacement(
  m: ServedManifest,
  facts: PlacementFacts,
  config: Pick<PlacementConfig, "maxBatch" | "threads">,
): Placement {
  if (m.kind === "tabular" && facts.fitsInline) return { kind: "inline" };
  const maxBatch = m.kind === "detection" ? 1 : (config.maxBatch ?? DEFAULT_MAX_BATCH[facts.provider]);
  if (maxBatch > 1 && facts.dynamicBatch) return { kind: "batching", maxBatch };
  const threads = facts.provider === "cuda" || !m.input.image ? 1 : Math.max(1, config.threads ?? defaultThreads());
  return { kind: "threads", threads };
}

/** The model in `file` loaded and placed. Throws when it cannot load or lacks an input or output the manifest names. */
export async function openPredictor(file: string, m: ServedManifest, config: PlacementConfig): Promise<Predictor> {
  const im = m.input.image;
  const inputName = m.input.name;
  const sampleShape = im ? [im.channels, im.height, im.width] : [m.input.columns!.length];
  const inline =
    m.kind === "tabular" && config.inline !== false
      ? await InlinePredictor.open(file, inputName, sampleShape, config.inline ?? INLINE_LIMITS)
      : undefined;
  const predictor = inline ?? (await onThreads(file, m, inputName, sampleShape, config));
  for (const need of [m.outputs.scores, m.outputs.cam, m.outputs.boxes].filter(Boolean) as string[]) {
    if (!predictor.outputNames.includes(need)) {
      await predictor.close();
      throw new Error(`the model has no output named ${need}`);
    }
  }
  return predictor;
}

async function onThreads(
  file: string,
  m: ServedManifest,
  inputName: string,
  sampleShape: number[],
  config: PlacementConfig,
): Promise<Predictor> {
  const jpegDecoder = config.jpegDecoder ?? "auto";
  const session = {
    intraOpThreads: config.intraOpThreads,
    image: m.input.image ? { manifest: m, classes: classNames(m), jpegDecoder } : undefined,
  };
  const first = await startFirstModelThread(file, { ...session, cuda: config.cuda });
  if (!first.names.inputNames.includes(inputName)) {
    await first.worker.terminate();
    throw new Error(`the model has no input named ${inputName} (it has ${first.names.inputNames.join(", ")})`);
  }
  const batchDim = first.names.inputShapes[inputName]?.[0];
  const facts = {
    fitsInline: false,
    provider: first.provider,
    dynamicBatch: typeof batchDim === "string" || batchDim === -1 || batchDim === undefined,
  };
  const placement = choosePlacement(m, facts, config);
  let more;
  try {
    more = await startMoreModelThreads(file, placement.kind === "threads" ? placement.threads - 1 : 0, session);
  } catch (err) {
    await first.worker.terminate();
    throw err;
  }
  const threads = new ThreadsPredictor([first.worker, ...more], first.names, inputName, sampleShape, first.provider, !!m.input.image);
  return placement.kind === "batching" ? new BatchingPredictor(threads, m, placement.maxBatch, jpegDecoder) : threads;
}
