/**
 * What the serving's WebAssembly modules (pixels-wasm.ts, maps-wasm.ts) share: the few WebAssembly members
 * they use, lazy per-thread instantiation with a JavaScript fallback, region alignment and memory growth.
 */

// The project's TypeScript libraries (no DOM) declare no WebAssembly API; these few members are what is used.
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const WA = (
  globalThis as unknown as {
    WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (m: object) => { exports: unknown } };
  }
).WebAssembly;

/**
 * A getter for this thread's instance of the module in `base64`, made on first use (then `init` runs on it);
 * null for good where WebAssembly SIMD is unavailable, and the caller runs its JavaScript loops instead.
 */
export function lazyInstance<T>(base64: string, init: (x: T) => void = () => undefined): () => T | null {
  let instance: T | null | undefined;
  return () => {
    if (instance === undefined) {
      try {
        const x = new WA.Instance(new WA.Module(Buffer.from(base64, "base64"))).exports as T;
        init(x);
        instance = x;
      } catch {
        instance = null;
      }
    }
    return instance;
  };
}

/** Vector loads and stores reach up to 16 bytes past a buffer: every region gets this much room after it. */
const ROOM = 32;
export const align = (n: number) => (n + ROOM + 15) & ~15;

/** `memory` grown to at least `bytes` (growing detaches earlier views: take them after this); its buffer. */
export function growTo(memory: WasmMemory, bytes: number): ArrayBuffer {
  const short = bytes - memory.buffer.byteLength;
  if (short > 0) memory.grow(Math.ceil(short / 65536));
  return memory.buffer;
}
