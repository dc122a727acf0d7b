import type { DicomRendering } from "../contract/types.js";
import type * as ort from "onnxruntime-node";
import { ApiError, messageFromStore, storedMessage, type StoredMessage } from "../errors.js";
import { OutboundRefusal, refuse } from "../net/outbound-guard.js";
import type { DicomHeaderSummary } from "../dicom/index.js";
import type { ImageAnswerOptions } from "./image-answer.js";
import type { ImageDescriptors } from "./image-descriptors.js";
import type { InputCheckFinding } from "./input-check.js";
import type { ImageSpec, ServedManifest } from "./manifest.js";
import type { DecodedImage } from "./tensor.js";

/**
 * Every message between the event loop and serving's worker threads, one discriminated union per direction and kind
 * of thread, so that each side switches on `type` and the compiler checks both ends. Jobs go out without their id;
 * worker-pool.ts adds it (`Numbered`) and answers the reply carrying the same id.
 */

export type Numbered<T> = T & { id: number };

/** A failure as it crosses a thread: a client's 4xx keeps its status, code and details (a bad image is a 415). */
export interface ThreadFailure {
  message: string;
  /** The catalog words, when the error had them (they cross the thread as plain data and are said at the edge). */
  text?: StoredMessage;
  status?: number;
  code?: string;
  details?: Record<string, unknown>;
  /** An OutboundRefusal (refused image input), which the edge answers like one raised on the event loop. */
  refusal?: boolean;
}

/** What a thread sends back for an error it caught. */
export function toThreadFailure(err: unknown): ThreadFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ApiError)) return { message };
  return {
    message,
    text: err.text ? storedMessage(err.text) : undefined,
    status: err.status,
    code: err.code,
    details: err.details as Record<string, unknown> | undefined,
    refusal: err instanceof OutboundRefusal,
  };
}

/** The error the event loop throws for a thread's failure: the same class of error the thread caught. */
export function fromThreadFailure(f: ThreadFailure): Error {
  if (f.status === undefined || f.code === undefined) return new Error(f.message);
  const words = messageFromStore(f.text) ?? f.message;
  return f.refusal ? refuse(f.status, f.code, words, f.details) : new ApiError(f.status, f.code, words, f.details);
}

/** Bytes as a buffer of their own, movable to a thread: as they are when they own one, else copied (a view on Node's
 * shared Buffer pool must never be moved). */
export function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
  return (whole ? bytes : new Uint8Array(bytes)) as Uint8Array<ArrayBuffer>;
}

export type Failed = { type: "failed"; id: number; failure: ThreadFailure };

// ---- model threads (model-thread.ts): one ONNX Runtime session each ----

/** What a model thread is started with (its workerData). */
export interface ModelThreadSetup {
  file: string;
  options: ort.InferenceSession.SessionOptions;
  /** Image models: what the whole-image job needs. */
  image?: {
    manifest: ServedManifest;
    classes: Record<string, string>;
    /** "auto": JPEGs decode with libjpeg-turbo where the host has it (jpeg-turbo.ts); "sharp": never. */
    jpegDecoder: "auto" | "sharp";
  };
}

export type ImageJobOptions = ImageAnswerOptions & { maxPixels: number };

export type ModelThreadJob =
  /** One run of the graph on a tensor (tabular rows, batches, and tests' references). */
  | { type: "run"; input: string; data: Float32Array; dims: number[] }
  /** A whole image prediction: bytes in, the 201 body's JSON bytes out. */
  | { type: "predict-image"; image: Uint8Array; opts: ImageJobOptions };

/** Not a job (no reply): an answer slot the event loop has finished reading. */
export type ModelThreadNotice = { type: "free-slot"; slot: number };

export interface SessionNames {
  inputNames: string[];
  outputNames: string[];
  inputShapes: Record<string, Array<number | string> | null>;
  /** Image models: "libjpeg-turbo (<library>)" or "sharp (why)", for the log. */
  jpegDecoder?: string;
}

export type ModelThreadReply =
  | ({ type: "loaded" } & SessionNames)
  | { type: "load-failed"; message: string }
  | { type: "outputs"; id: number; outputs: Record<string, { data: Float32Array; dims: readonly number[] }> }
  /** The answer sits in the thread's shared slot `slot` (its memory sent along the first time only). */
  | {
      type: "answer-in-slot";
      id: number;
      slot: number;
      length: number;
      shared?: SharedArrayBuffer;
      inputCheck: InputCheckFinding;
      descriptors: ImageDescriptors;
    }
  /** The answer in a buffer of its own, moved. */
  | { type: "answer"; id: number; body: ArrayBuffer; length: number; inputCheck: InputCheckFinding; descriptors: ImageDescriptors }
  | Failed;

// ---- preprocessing threads (preprocess-thread.ts): pixels for the batched path and the dataset checks ----

export interface InspectedDicom {
  header: DicomHeaderSummary;
  width: number;
  height: number;
  channels: 1 | 3;
  image?: DecodedImage;
}

export type PreprocessJob =
  /** Image bytes -> the model's input tensor (preprocess.ts's one way: decode, resize, normalise). */
  | { type: "preprocess"; bytes: Uint8Array; spec: ImageSpec; maxPixels: number; jpegDecoder: "auto" | "sharp" }
  /** A DICOM decoded whole and its header summarised, for the dataset report; `pixels`: the image comes back too. */
  | { type: "inspect-dicom"; bytes: Uint8Array; pixels: boolean; bare: boolean; maxPixels: number; rendering?: DicomRendering };

export type PreprocessReply =
  | {
      type: "tensor";
      id: number;
      tensor: Float32Array;
      scaleX: number;
      scaleY: number;
      width: number;
      height: number;
      descriptors: ImageDescriptors;
    }
  | { type: "inspected"; id: number; inspected: InspectedDicom }
  | Failed;
