import os from "node:os";
import { Worker } from "node:worker_threads";
import { ApiError } from "../errors.js";
import type { ImageSpec } from "./manifest.js";
import type { DecodedImage } from "./tensor.js";
import type { DicomHeaderSummary } from "../dicom/index.js";

export interface InspectedDicom {
  header: DicomHeaderSummary;
  width: number;
  height: number;
  channels: 1 | 3;
  image?: DecodedImage;
}

/**
 * Worker threads for the CPU-heavy part of preprocessing (Pillow-exact resize + normalise of large images), so a
 * 12-megapixel photo does not stall every other request on the event loop. JPEGs are decoded here too, by
 * libjpeg-turbo (runJpeg); other images are decoded off the loop inside sharp before they come here. The worker
 * is a small JS bootstrap that registers tsx and loads preprocess-worker.ts, which works whether the server runs
 * under tsx, vitest or plain node with tsx installed.
 */

type Result = { tensor: Float32Array; scaleX: number; scaleY: number; width?: number; height?: number };
interface Job {
  /** undefined: the thread's libjpeg-turbo declined the JPEG (runJpeg). */
  resolve: (r: Result | undefined) => void;
  reject: (e: Error) => void;
}

class PreprocessPool {
  private readonly workers: Array<{ worker: Worker; busy: number }> = [];
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;

  constructor(private readonly size: number) {}

  private spawn() {
    const worker = new Worker(new URL("./preprocess-worker.mjs", import.meta.url));
    worker.unref(); // never keeps the process alive on its own
    const entry = { worker, busy: 0 };
    worker.on(
      "message",
      (m: {
        id: number;
        tensor?: Float32Array;
        scaleX?: number;
        scaleY?: number;
        width?: number;
        height?: number;
        declined?: boolean;
        inspected?: InspectedDicom;
        error?: string;
        status?: number;
        code?: string;
        details?: Record<string, unknown>;
      }) => {
        const job = this.jobs.get(m.id);
        if (!job) return;
        this.jobs.delete(m.id);
        entry.busy--;
        if (m.error) job.reject(m.status ? new ApiError(m.status, m.code!, m.error, m.details) : new Error(m.error));
        else if (m.declined) job.resolve(undefined);
        else if (m.inspected) (job.resolve as (r: unknown) => void)(m.inspected);
        else job.resolve({ tensor: m.tensor!, scaleX: m.scaleX!, scaleY: m.scaleY!, width: m.width, height: m.height });
      },
    );
    worker.on("error", (err) => {
      // A crashed worker fails its jobs and is replaced on the next run.
      this.workers.splice(this.workers.indexOf(entry), 1);
      for (const [id, job] of this.jobs)
        if ((job as Job & { worker?: Worker }).worker === worker) {
          this.jobs.delete(id);
          job.reject(err);
        }
    });
    this.workers.push(entry);
    return entry;
  }

  run(img: DecodedImage, spec: ImageSpec): Promise<{ tensor: Float32Array; scaleX: number; scaleY: number }> {
    // The pixel buffer is copied, not transferred: it may be a view on sharp's Buffer pool.
    return this.post({ img, spec }) as Promise<Result>;
  }

  /**
   * A JPEG decoded on the thread by libjpeg-turbo (jpeg-turbo.ts), then resized and normalised there; undefined
   * when it declines the file (or the host has no libturbojpeg), and the caller decodes with sharp instead.
   */
  runJpeg(bytes: Uint8Array, spec: ImageSpec, maxPixels: number): Promise<Result | undefined> {
    return this.post({ jpeg: bytes, spec, maxPixels });
  }

  /** A DICOM parsed, decoded and rendered (src/dicom) on the thread, then resized and normalised there. */
  runDicom(bytes: Uint8Array, spec: ImageSpec, maxPixels: number): Promise<Result | undefined> {
    return this.post({ dicom: bytes, spec, maxPixels });
  }

  /**
   * A DICOM checked for the dataset report: decoded whole (a corrupt frame fails here, not in training) and its
   * header summarised; `pixels`: the rendered image comes back too (thumbnails); `bare`: a dataset without preamble
   * and file meta is read too (a .dcm file). Off the event loop, like serving.
   */
  inspectDicom(bytes: Uint8Array, pixels = false, bare = false): Promise<InspectedDicom> {
    return this.post({ inspect: bytes, pixels, bare }) as unknown as Promise<InspectedDicom>;
  }

  private post(message: Record<string, unknown>): Promise<Result | undefined> {
    let entry = this.workers.reduce<(typeof this.workers)[number] | undefined>(
      (best, w) => (!best || w.busy < best.busy ? w : best),
      undefined,
    );
    if (!entry || (entry.busy > 0 && this.workers.length < this.size)) entry = this.spawn();
    const id = this.nextId++;
    entry.busy++;
    return new Promise((resolve, reject) => {
      this.jobs.set(id, Object.assign({ resolve, reject }, { worker: entry.worker }));
      entry.worker.postMessage({ id, ...message });
    });
  }

  async close() {
    await Promise.all(this.workers.splice(0).map((w) => w.worker.terminate()));
  }
}

let pool: PreprocessPool | undefined;
/** The process-wide pool: one worker per spare core (at least one), started on first use. */
export function preprocessPool(): PreprocessPool {
  pool ??= new PreprocessPool(Math.max(1, Math.min(4, os.availableParallelism() - 1)));
  return pool;
}
