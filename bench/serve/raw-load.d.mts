/** Types of raw-load.mjs (plain JavaScript, so that the peer's bench.py can run it with `node`). */
export interface LoadJob {
  url: string;
  path: string;
  key: string;
  body: string;
  concurrency: number;
  seconds: number;
  warmup?: number;
}
export interface LoadResult {
  latencies: number[];
  starts: number[];
  errors: number;
  firstError?: string;
  seconds: number;
  bytes: number;
  cpuMs: number;
}
export function requestBytes(job: LoadJob): Buffer;
export function once(job: LoadJob): Promise<{ status: number; text: string }>;
export function runLoad(job: LoadJob, onStarted?: () => void): Promise<LoadResult>;
export function closeAll(): void;
