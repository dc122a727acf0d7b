import { createRequire } from "node:module";
import type { DecodedImage } from "./tensor.js";

/**
 * JPEG decoding on the calling thread with libjpeg-turbo's TurboJPEG API (the system's libturbojpeg, reached
 * through koffi's FFI), for the inference and preprocessing threads. Why not sharp for every image: sharp spends
 * ~0.6 ms per call before decoding anything (its options crossing into C++, libvips' pipeline set-up, the hop to
 * libuv's pool and back) and took 2.4 ms of CPU for the 512x384 benchmark photo whose decode proper is 0.75 ms
 * (bench/serve/worker-stages.ts --decoder auto|sharp; bench/serve/README.md). Pixels are the same: sharp's libvips
 * decodes with libjpeg-turbo's code (mozjpeg), and so does Pillow in the pipelines, all three with the accurate
 * integer DCT and smooth chroma upsampling that TurboJPEG uses when no flag asks otherwise
 * (test/unit/serving-jpeg-turbo.test.ts compares them byte for byte).
 *
 * Only the plain case is decoded here: a JPEG whose header reads cleanly, in YCbCr, RGB or greyscale, within the
 * pixel limit, decoding without a single warning. Everything else (not a JPEG, CMYK, over the limit, truncated or
 * corrupt data, or no libturbojpeg on the host) returns undefined, and the caller decodes with sharp, whose
 * answers (415, 413, the CMYK conversion) stay the contract.
 */

// TurboJPEG 2.x constants (turbojpeg.h).
const TJPF_RGB = 0;
const TJPF_GRAY = 6;
const TJCS_RGB = 0;
const TJCS_YCbCr = 1;
const TJCS_GRAY = 2;
/** A warning (e.g. a truncated file that libjpeg would pad with grey) is an error: sharp refuses those too. */
const TJFLAG_STOPONWARNING = 8192;
/** Refuse progressive files with an unreasonable number of scans (a CPU bomb) instead of decoding them here. */
const TJFLAG_LIMITSCANS = 32768;
const FLAGS = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;

/** The names the library has on Linux (Debian's libturbojpeg0, Fedora's turbojpeg) and macOS, tried in order. */
const LIBRARY_NAMES = ["libturbojpeg.so.0", "libturbojpeg.so", "libturbojpeg.0.dylib", "libturbojpeg.dylib"];

type Handle = unknown;
interface TurboJpeg {
  handle: Handle;
  header: (h: Handle, buf: Uint8Array, size: number, w: number[], ht: number[], subsamp: number[], cs: number[]) => number;
  decompress: (
    h: Handle,
    buf: Uint8Array,
    size: number,
    dst: Uint8Array,
    w: number,
    pitch: number,
    ht: number,
    pf: number,
    flags: number,
  ) => number;
  library: string;
}

let turbo: TurboJpeg | null | undefined;
let loadError = "";

/**
 * This thread's TurboJPEG decompressor, opened on first use (a handle must not be shared between threads). It
 * lives as long as the thread and is not destroyed with it: a few KB per serving thread ever started. Null
 * when the library is not installed (Debian: libturbojpeg0) or cannot be loaded; then sharp decodes everything.
 */
export function openTurboJpeg(): TurboJpeg | null {
  if (turbo === undefined) {
    const r = loadTurboJpeg();
    turbo = "error" in r ? null : r;
    loadError = "error" in r ? r.error : "";
  }
  return turbo;
}

/** Loads the first of `names` that opens and starts a decompressor, or says why none did. */
export function loadTurboJpeg(names: string[] = LIBRARY_NAMES): TurboJpeg | { error: string } {
  let koffi: typeof import("koffi");
  try {
    koffi = createRequire(import.meta.url)("koffi") as typeof import("koffi");
  } catch (err) {
    return { error: `koffi: ${(err as Error).message}` };
  }
  let error = "";
  for (const name of names) {
    try {
      const lib = koffi.load(name);
      const handle: unknown = lib.func("void *tjInitDecompress()")();
      if (!handle) throw new Error("tjInitDecompress failed");
      return {
        handle,
        header: lib.func(
          "int tjDecompressHeader3(void *h, const uint8_t *buf, unsigned long size, _Out_ int *w, _Out_ int *ht, _Out_ int *subsamp, _Out_ int *cs)",
        ),
        decompress: lib.func(
          "int tjDecompress2(void *h, const uint8_t *buf, unsigned long size, uint8_t *dst, int w, int pitch, int ht, int pf, int flags)",
        ),
        library: name,
      };
    } catch (err) {
      error = `${name}: ${(err as Error).message}`;
    }
  }
  return { error };
}

/** Why openTurboJpeg returned null (for the log line that says which decoder serves). */
export const turboJpegLoadError = () => loadError;

/**
 * Pixel memory reused from one decode to the next on a thread (its images are usually the same size); images
 * above `maxReusedBytes` get a buffer of their own so one huge upload does not stay resident.
 */
export class PixelMemory {
  private buf?: Uint8Array;
  constructor(private readonly maxReusedBytes = 16 * 1024 * 1024) {}
  take(bytes: number): Uint8Array {
    if (bytes > this.maxReusedBytes) return new Uint8Array(bytes);
    if (!this.buf || this.buf.length < bytes) this.buf = new Uint8Array(Math.max(bytes, this.buf?.length ?? 0));
    return this.buf.subarray(0, bytes);
  }
}

const out = { w: [0], h: [0], subsamp: [0], cs: [0] };

/** Starts like a JPEG (SOI marker, then another marker). */
export const isJpeg = (bytes: Uint8Array) => bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

/**
 * The decoded image, or undefined when this decoder declines it (see the module comment). With `memory` the
 * pixels live in its buffer and are valid until its next take().
 */
export function decodeJpegTurbo(bytes: Uint8Array, maxPixels: number, memory?: PixelMemory): DecodedImage | undefined {
  if (!isJpeg(bytes)) return undefined;
  const tj = openTurboJpeg();
  if (!tj) return undefined;
  if (tj.header(tj.handle, bytes, bytes.length, out.w, out.h, out.subsamp, out.cs) !== 0) return undefined;
  const width = out.w[0],
    height = out.h[0],
    cs = out.cs[0];
  if (!(width > 0 && height > 0) || width * height > maxPixels) return undefined;
  const channels = cs === TJCS_GRAY ? 1 : cs === TJCS_YCbCr || cs === TJCS_RGB ? 3 : 0;
  if (!channels) return undefined; // CMYK / YCCK: sharp converts those to sRGB
  const size = width * height * channels;
  const pixels = memory ? memory.take(size) : new Uint8Array(size);
  if (tj.decompress(tj.handle, bytes, bytes.length, pixels, width, 0, height, channels === 1 ? TJPF_GRAY : TJPF_RGB, FLAGS) !== 0)
    return undefined;
  return { pixels, width, height, channels };
}
