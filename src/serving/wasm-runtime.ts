/**
 * What the serving's WebAssembly modules (pixels-wasm.ts, maps-wasm.ts) share: the few WebAssembly members
 * they use, lazy per-thread instantiation, region alignment and memory growth. Production has no JavaScript
 * twin of these loops (the twins in test/oracles/ are the tests' reference only): the supported Node
 * (package.json engines) always has WebAssembly SIMD, and without it serving fails, saying so.
 */

// The project's TypeScript libraries (no DOM) declare no WebAssembly API; these few members are what is used.
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const WA = (
  globalThis as unknown as {
    WebAssembly?: { Module: new (bytes: Uint8Array) => object; Instance: new (m: object) => { exports: unknown } };
  }
).WebAssembly;

/**
 * A getter for this thread's instance of the module in `base64`, made on first use (then `init` runs on it).
 * Where the module cannot be compiled (no WebAssembly, or no SIMD: an unsupported Node) every call throws an
 * error that says so; nothing falls back to slower code.
 */
export function lazyInstance<T>(base64: string, init: (x: T) => void = () => undefined): () => T {
  let instance: T | undefined;
  let failure: Error | undefined;
  return () => {
    if (instance !== undefined) return instance;
    if (!failure) {
      try {
        if (!WA) throw new Error("this JavaScript engine has no WebAssembly");
        const x = new WA.Instance(new WA.Module(Buffer.from(base64, "base64"))).exports as T;
        init(x);
        return (instance = x);
      } catch (cause) {
        failure = new Error(
          `Builder needs WebAssembly SIMD (Node >= 20.19): its image preprocessing and Grad-CAM maps run only there, ` +
            `and this Node ${process.version} could not instantiate the module (${cause instanceof Error ? cause.message : String(cause)})`,
          { cause },
        );
      }
    }
    throw failure;
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
