import v8 from "node:v8";
import type { Worker } from "node:worker_threads";
import { fromThreadFailure, type Failed, type Numbered } from "./thread-messages.js";

/**
 * Worker threads that take numbered jobs, the one pool behind both kinds of serving thread: a model's threads
 * (placement-threads.ts, placement-batching.ts: a fixed set started with the model) and the process's
 * preprocessing threads (preprocess-pool.ts: started on demand up to a size). A job goes to the least busy thread;
 * its reply (same id) resolves it, a `failed` reply rejects it with the error the thread caught. A thread that
 * crashes fails its own jobs and takes no more; a growing pool starts another in its place on the next job.
 */

interface PoolThread {
  worker: Worker;
  busy: number;
}

interface Waiting<Reply> {
  thread: PoolThread;
  resolve: (r: { reply: Reply; worker: Worker }) => void;
  reject: (e: Error) => void;
}

export interface WorkerPoolOptions {
  /** Threads already started (a model's, after their sessions loaded). */
  threads?: Worker[];
  /** Start threads on demand: a new one while every thread is busy and fewer than `max` run. */
  grow?: { max: number; spawn: () => Worker };
}

export class WorkerPool<Job extends { type: string }, Reply extends { type: string; id?: number }> {
  private readonly threads: PoolThread[] = [];
  private readonly waiting = new Map<number, Waiting<Reply>>();
  private nextId = 1;

  constructor(private readonly o: WorkerPoolOptions) {
    for (const w of o.threads ?? []) this.add(w);
  }

  /** Threads running now. */
  get size(): number {
    return this.threads.length;
  }

  /** Posts one job to the least busy thread (`transfer`: buffers moved, not copied); resolves to its reply. */
  post(job: Job, transfer: ArrayBuffer[] = []): Promise<{ reply: Exclude<Reply, Failed>; worker: Worker }> {
    let thread: PoolThread | undefined;
    for (const t of this.threads) if (!thread || t.busy < thread.busy) thread = t;
    if (this.o.grow && (!thread || (thread.busy > 0 && this.threads.length < this.o.grow.max))) thread = this.add(this.o.grow.spawn());
    if (!thread) return Promise.reject(new Error("the worker threads have stopped"));
    const id = this.nextId++;
    thread.busy++;
    const t = thread;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { thread: t, resolve: resolve as Waiting<Reply>["resolve"], reject });
      t.worker.postMessage({ ...job, id } satisfies Numbered<Job>, transfer);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate().catch(() => undefined)));
  }

  private add(worker: Worker): PoolThread {
    worker.unref(); // a pool never keeps the process alive on its own
    const thread = { worker, busy: 0 };
    worker.on("message", (m: Reply) => {
      if (m.id === undefined) return;
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      thread.busy--;
      if (m.type === "failed") w.reject(fromThreadFailure((m as unknown as Failed).failure));
      else w.resolve({ reply: m, worker });
    });
    worker.on("error", (err) => {
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads.splice(i, 1);
      for (const [id, w] of this.waiting)
        if (w.thread === thread) {
          this.waiting.delete(id);
          w.reject(err);
        }
    });
    this.threads.push(thread);
    return thread;
  }
}

/**
 * The heap of every V8 isolate created from now on (serving's threads; the event loop's already exists) is sized
 * for a thread that allocates a few MB of short-lived buffers per request. V8 reads these flags when an isolate is
 * created, so setting them before the threads start is enough. What each flag fixed, with the measurements
 * (bench/serve/worker-gc.ts, idle-gc.ts), is in bench/serve/notebook/README.md:
 * - a young generation of 8 MB instead of 2 MB: fewer full collections in a request's latency;
 * - a first old-generation limit of 64 MB: no incremental marking after a thread has idled (room, not memory);
 * - no memory reducer: no full collections on the threads of models that are not being called.
 */
let threadHeapSized = false;
export function sizeThreadHeaps(): void {
  if (threadHeapSized) return;
  v8.setFlagsFromString("--min-semi-space-size=8");
  v8.setFlagsFromString("--initial-old-space-size=64");
  v8.setFlagsFromString("--no-memory-reducer");
  threadHeapSized = true;
}
