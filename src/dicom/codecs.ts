import { createRequire } from "node:module";
import { statedSize, type CompressedKind } from "./codestream.js";

/**
 * The compressed-pixel decoders: Cornerstone's WebAssembly builds of libjpeg-turbo (8-bit JPEG), CharLS (JPEG-LS)
 * and OpenJPEG (JPEG 2000), and the pure-JS jpeg-lossless-decoder-js (JPEG lossless, process 14). Each WASM module
 * is instantiated per thread on first use (loadCodecs, a few ms each), and again after a decode that grew its memory
 * past KEEP_MEMORY_BYTES. The caller checks a frame's stated size first (pixels.ts, codestream.ts): the decoders
 * allocate whatever a codestream claims. Decoding itself is synchronous, so it is
 * called only where images are decoded today, off the event loop: the model's inference worker, the preprocessing
 * pool's threads, and dataset validation (which already runs per file, see datasets/images.ts).
 */

export interface CodecFrame {
  /** Interleaved samples as the decoder wrote them (8-bit: Uint8Array; 9-16 bit: Uint16Array/Int16Array). */
  data: Uint8Array | Uint16Array | Int16Array;
  width: number;
  height: number;
  components: number;
}

interface FrameInfo {
  width: number;
  height: number;
  bitsPerSample: number;
  componentCount: number;
  isSigned?: boolean;
}
/** The shape every Cornerstone codec's decoder class shares (emscripten embind objects: delete() frees them). */
interface WasmDecoder {
  getEncodedBuffer(length: number): Uint8Array;
  decode(): void;
  getFrameInfo(): FrameInfo;
  getDecodedBuffer(): Uint8Array;
  delete(): void;
}
type DecoderClass = new () => WasmDecoder;

const require = createRequire(import.meta.url);

// jpeg-lossless-decoder-js names typings in its package.json that it does not ship: the little used here.
interface LosslessDecoder {
  decode(buffer: ArrayBuffer, offset: number, length: number, numBytes: number): Uint8Array | Uint16Array;
  xDim: number;
  yDim: number;
  numComp: number;
}
const { Decoder: JpegLosslessDecoder } = require("jpeg-lossless-decoder-js") as { Decoder: new () => LosslessDecoder };
type Factory = (module: { print: () => void; printErr: () => void }) => Promise<EmscriptenModule>;
/** What the emscripten module exposes beside the decoder classes: its memory, as a view that grows with it. */
type EmscriptenModule = Record<string, DecoderClass> & { HEAPU8: Uint8Array };

type WasmKind = Exclude<CompressedKind, "jpeg-lossless">;
const PACKAGES: Record<WasmKind, { module: string; decoder: string }> = {
  "jpeg-baseline": { module: "@cornerstonejs/codec-libjpeg-turbo-8bit/decodewasmjs", decoder: "JPEGDecoder" },
  "jpeg-ls": { module: "@cornerstonejs/codec-charls/decodewasmjs", decoder: "JpegLSDecoder" },
  "jpeg-2000": { module: "@cornerstonejs/codec-openjpeg/decodewasmjs", decoder: "J2KDecoder" },
};
const WASM_KINDS = Object.keys(PACKAGES) as WasmKind[];

/**
 * A WebAssembly memory only grows: a codec that decoded one large frame would keep that much memory for the life of
 * its thread, on every thread that ever decoded one (OpenJPEG holds ~4 bytes per sample and more). A codec whose
 * memory grew past this is dropped after its decode, so that V8 frees its memory, and instantiated again (a few ms)
 * the next time it is needed. OpenJPEG starts at 50 MiB; a 512x512 CT slice decodes without growing.
 */
const KEEP_MEMORY_BYTES = 64 * 2 ** 20;

interface Codec {
  Decoder: DecoderClass;
  module: EmscriptenModule;
}
const codecs = new Map<WasmKind, Codec>();
let loading: Promise<void> | undefined;

/**
 * Instantiates the WASM decoders this thread lacks: all three the first time, one again after it was dropped for
 * its size. decodeCompressed needs them present; decodeDicom checks codecsReady() right before decoding.
 */
export async function loadCodecs(): Promise<void> {
  while (!codecsReady()) {
    loading ??= Promise.all(
      WASM_KINDS.filter((k) => !codecs.has(k)).map(async (kind) => {
        // OpenJPEG writes "[INFO] ..." lines for every image through emscripten's print: not into our logs.
        const module = await (require(PACKAGES[kind].module) as Factory)({ print: () => {}, printErr: () => {} });
        codecs.set(kind, { Decoder: module[PACKAGES[kind].decoder], module });
      }),
    )
      .then(() => undefined)
      .finally(() => (loading = undefined));
    await loading;
  }
}

export const codecsReady = () => codecs.size === WASM_KINDS.length;

/** The bytes of memory a codec holds on this thread now (0 when not instantiated): for tests and benchmarks. */
export const codecMemoryBytes = (kind: WasmKind) => codecs.get(kind)?.module.HEAPU8.length ?? 0;

function runWasm(kind: WasmKind, bytes: Uint8Array, signed: boolean): CodecFrame {
  const codec = codecs.get(kind);
  if (!codec) throw new Error("the DICOM codecs are not loaded on this thread (loadCodecs)");
  const decoder = new codec.Decoder();
  try {
    decoder.getEncodedBuffer(bytes.length).set(bytes);
    try {
      decoder.decode();
    } catch (err) {
      // Emscripten throws a C++ exception as a bare number (a pointer): say what failed instead.
      throw typeof err === "number" ? new Error("the decoder rejects the compressed frame") : err;
    }
    const info = decoder.getFrameInfo();
    const out = decoder.getDecodedBuffer(); // a view on WASM memory: copied before delete() frees it
    let data: CodecFrame["data"];
    if (info.bitsPerSample <= 8) data = out.slice();
    else {
      const copy = out.slice();
      data = signed ? new Int16Array(copy.buffer, 0, copy.length >> 1) : new Uint16Array(copy.buffer, 0, copy.length >> 1);
    }
    return { data, width: info.width, height: info.height, components: info.componentCount };
  } finally {
    decoder.delete();
    if (codec.module.HEAPU8.length > KEEP_MEMORY_BYTES) codecs.delete(kind);
  }
}

/** One frame's compressed bytes -> its samples. Throws the decoder's own error (the caller names the syntax). */
export function decodeCompressed(kind: CompressedKind, bytes: Uint8Array, bitsAllocated: number, signed: boolean): CodecFrame {
  if (kind === "jpeg-lossless") {
    const numBytes = bitsAllocated <= 8 ? 1 : 2;
    // The decoder reads from an ArrayBuffer at an offset: hand it a copy that starts at 0 (bytes may be a view).
    const own = new Uint8Array(bytes); // a copy (Buffer.slice would be a view on the whole pool)
    const d = new JpegLosslessDecoder();
    const out = d.decode(own.buffer, 0, own.length, numBytes);
    const data = numBytes === 2 && signed ? new Int16Array(out.buffer, out.byteOffset, out.length) : out;
    return { data, width: d.xDim, height: d.yDim, components: d.numComp };
  }
  if (kind === "jpeg-baseline") {
    const precision = statedSize(kind, bytes)?.precision;
    if (precision !== undefined && precision !== 8)
      throw new Error(`a ${precision}-bit JPEG; only 8-bit JPEG baseline/extended is decoded`);
  }
  return runWasm(kind, bytes, signed);
}
