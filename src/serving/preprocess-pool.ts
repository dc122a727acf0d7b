import os from "node:os";
import { Worker } from "node:worker_threads";
import type { ImageSpec } from "./manifest.js";
import type { DecodedImage } from "./tensor.js";

/**
 * Worker threads for the CPU-heavy part of preprocessing (Pillow-exact resize + normalise of large images), so a
 * 12-megapixel photo does not stall every other request on the event loop. Decoding already runs off the loop
 * inside sharp. The worker is a small JS bootstrap that registers tsx and loads preprocess-worker.ts, which works
 * whether the server runs under tsx, vitest or plain node with tsx installed.
 */

interface Job {
  resolve: (r: { tensor: Float32Array; scaleX: number; scaleY: number }) => void;
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
    worker.on("message", (m: { id: number; tensor?: Float32Array; scaleX?: number; scaleY?: number; error?: string }) => {
      const job = this.jobs.get(m.id);
      if (!job) return;
      this.jobs.delete(m.id);
      entry.busy--;
      if (m.error) job.reject(new Error(m.error));
      else job.resolve({ tensor: m.tensor!, scaleX: m.scaleX!, scaleY: m.scaleY! });
    });
    worker.on("error", (err) => {
      // A crashed worker fails its jobs and is replaced on the next run.
      this.workers.splice(this.workers.indexOf(entry), 1);
      for (const [id, job] of this.jobs) if ((job as Job & { worker?: Worker }).worker === worker) {
        this.jobs.delete(id);
        job.reject(err);
      }
    });
    this.workers.push(entry);
    return entry;
  }

  run(img: DecodedImage, spec: ImageSpec): Promise<{ tensor: Float32Array; scaleX: number; scaleY: number }> {
    let entry = this.workers.reduce<(typeof this.workers)[number] | undefined>((best, w) => (!best || w.busy < best.busy ? w : best), undefined);
    if (!entry || (entry.busy > 0 && this.workers.length < this.size)) entry = this.spawn();
    const id = this.nextId++;
    entry.busy++;
    return new Promise((resolve, reject) => {
      this.jobs.set(id, Object.assign({ resolve, reject }, { worker: entry!.worker }));
      // The pixel buffer is copied, not transferred: it may be a view on sharp's Buffer pool.
      entry!.worker.postMessage({ id, img, spec });
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
