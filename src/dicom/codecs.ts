import { createRequire } from "node:module";

/**
 * The compressed-pixel decoders: Cornerstone's WebAssembly builds of libjpeg-turbo (8-bit JPEG), CharLS (JPEG-LS)
 * and OpenJPEG (JPEG 2000), and the pure-JS jpeg-lossless-decoder-js (JPEG lossless, process 14). Each WASM module
 * is instantiated once per thread on first use (loadCodecs, ~10 ms each); decoding itself is synchronous, so it is
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
type Factory = (module: { print: () => void; printErr: () => void }) => Promise<Record<string, DecoderClass>>;

let loaded: Promise<{ jpeg: DecoderClass; jls: DecoderClass; j2k: DecoderClass }> | undefined;
let codecs: Awaited<NonNullable<typeof loaded>> | undefined;

/** Instantiates the three WASM decoders on this thread (once); decodeFrame needs it done first. */
export function loadCodecs(): Promise<void> {
  loaded ??= (async () => {
    const [jpeg, jls, j2k] = await Promise.all(
      [
        "@cornerstonejs/codec-libjpeg-turbo-8bit/decodewasmjs",
        "@cornerstonejs/codec-charls/decodewasmjs",
        "@cornerstonejs/codec-openjpeg/decodewasmjs",
      ].map(
        // OpenJPEG writes "[INFO] ..." lines for every image through emscripten's print: not into our logs.
        (name) => (require(name) as Factory)({ print: () => {}, printErr: () => {} }),
      ),
    );
    codecs = { jpeg: jpeg.JPEGDecoder, jls: jls.JpegLSDecoder, j2k: j2k.J2KDecoder };
    return codecs;
  })();
  return loaded.then(() => undefined);
}

function runWasm(Decoder: DecoderClass, bytes: Uint8Array, signed: boolean): CodecFrame {
  const decoder = new Decoder();
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
  }
}

export type CompressedKind = "jpeg-baseline" | "jpeg-lossless" | "jpeg-ls" | "jpeg-2000";

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
  if (!codecs) throw new Error("the DICOM codecs are not loaded on this thread (loadCodecs)");
  if (kind === "jpeg-baseline") {
    const precision = jpegPrecision(bytes);
    if (precision !== undefined && precision !== 8)
      throw new Error(`a ${precision}-bit JPEG; only 8-bit JPEG baseline/extended is decoded`);
  }
  const Decoder = kind === "jpeg-baseline" ? codecs.jpeg : kind === "jpeg-ls" ? codecs.jls : codecs.j2k;
  return runWasm(Decoder, bytes, signed);
}

/** The sample precision in a JPEG's SOF marker (8 or 12 for DCT), or undefined when none is found. */
function jpegPrecision(b: Uint8Array): number | undefined {
  let i = 2;
  while (i + 4 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return b[i + 4];
    i += 2 + ((b[i + 2] << 8) | b[i + 3]);
  }
  return undefined;
}
