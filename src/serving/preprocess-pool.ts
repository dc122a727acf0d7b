import os from "node:os";
import { Worker } from "node:worker_threads";
import type { DicomRendering } from "../contract/types.js";
import type { ImageSpec } from "./manifest.js";
import { ownBuffer, type InspectedDicom, type PreprocessJob, type PreprocessReply } from "./thread-messages.js";
import { sizeThreadHeaps, WorkerPool } from "./worker-pool.js";

export type { InspectedDicom } from "./thread-messages.js";

/**
 * The process's preprocessing threads (preprocess-thread.ts), for the pixel work that must not run on the event
 * loop outside a model's own threads: the batching placement's images (decode, resize, normalise: a 12-megapixel
 * photo would otherwise stall every other request) and the dataset checks' DICOM files. Started on demand, one per
 * spare core (at least one, at most four). The thread is a small JS bootstrap that registers tsx and loads
 * preprocess-thread.ts, which works under tsx, vitest or plain node with tsx installed.
 */
class PreprocessPool {
  private readonly pool: WorkerPool<PreprocessJob, PreprocessReply>;

  constructor(size: number) {
    this.pool = new WorkerPool({
      grow: {
        max: size,
        spawn: () => {
          sizeThreadHeaps();
          return new Worker(new URL("./preprocess-thread.mjs", import.meta.url));
        },
      },
    });
  }

  /** Image bytes -> the input tensor (preprocess.ts's steps on a thread); the bytes are moved when they own their buffer. */
  async preprocess(bytes: Uint8Array, spec: ImageSpec, maxPixels: number, jpegDecoder: "auto" | "sharp") {
    const own = ownBuffer(bytes);
    const { reply } = await this.pool.post({ type: "preprocess", bytes: own, spec, maxPixels, jpegDecoder }, [own.buffer]);
    if (reply.type !== "tensor") throw new Error(`unexpected reply from a preprocessing thread: ${reply.type}`);
    return reply;
  }

  /**
   * A DICOM checked for the dataset report: decoded whole (a corrupt frame fails here, not in training) and its
   * header summarised; `pixels`: the rendered image comes back too (thumbnails); `bare`: a dataset without preamble
   * and file meta is read too (a .dcm file); `maxPixels`: a larger image is refused before any pixel is decoded
   * (413 image_too_many_pixels); `rendering`: a model's (its manifest's input.image.dicom) instead of the file's own
   * window (the secondary capture sent back to the PACS shows the image as the model saw it). The bytes are copied
   * (the caller may still hold them).
   */
  async inspectDicom(
    bytes: Uint8Array,
    o: { pixels?: boolean; bare?: boolean; maxPixels: number; rendering?: DicomRendering },
  ): Promise<InspectedDicom> {
    const { reply } = await this.pool.post({
      type: "inspect-dicom",
      bytes,
      pixels: !!o.pixels,
      bare: !!o.bare,
      maxPixels: o.maxPixels,
      rendering: o.rendering,
    });
    if (reply.type !== "inspected") throw new Error(`unexpected reply from a preprocessing thread: ${reply.type}`);
    return reply.inspected;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

let pool: PreprocessPool | undefined;
/** The process-wide pool, started on first use. */
export function preprocessPool(): PreprocessPool {
  pool ??= new PreprocessPool(Math.max(1, Math.min(4, os.availableParallelism() - 1)));
  return pool;
}
