import { GradientMap } from "./postprocess.js";

/**
 * JSON bodies as bytes. Plain objects are walked key by key so that Grad-CAM maps (GradientMap, ~200,000
 * integers each) are written straight from their bytes instead of through JSON.stringify of number arrays,
 * which cost ~8 ms per vision prediction, more than the model. Everything else is JSON.stringify, so the text
 * is what res.json would send. Here in serving because the inference worker threads encode their answers;
 * src/http/json-body.ts sends them.
 */

/**
 * A body already encoded as JSON, e.g. a prediction serialised on the inference worker thread that computed it:
 * written as it is. release, when given, is called once the bytes have been handed to the socket, so their
 * memory can be reused (see placement-threads.ts). toJSON gives the value back for anything that stringifies it another way.
 */
export class JsonBytes {
  constructor(
    readonly bytes: Uint8Array,
    readonly release?: () => void,
  ) {}

  toJSON(): unknown {
    return JSON.parse(Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString("utf8"));
  }
}

/**
 * Where encodeJson writes: one buffer, doubled when full (into a new buffer). Starting from a reused buffer big
 * enough for the answer, a prediction allocates nothing per request for it (a Grad-CAM answer is ~700 KB;
 * allocating that on every request made V8 run a full GC every few hundred milliseconds: see model-thread.ts).
 */
export class JsonOut {
  buf: Buffer;
  n = 0;

  constructor(initial?: ArrayBuffer | SharedArrayBuffer) {
    this.buf = initial ? Buffer.from(initial as ArrayBuffer) : Buffer.allocUnsafeSlow(1024);
  }

  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }

  text(s: string): void {
    this.room(s.length * 3); // a UTF-16 code unit is at most 3 bytes of UTF-8
    this.n += this.buf.write(s, this.n, "utf8");
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.n);
  }
}

export function encodeJson(value: unknown, out = new JsonOut()): Buffer {
  if (value instanceof JsonBytes) return Buffer.from(value.bytes.buffer, value.bytes.byteOffset, value.bytes.byteLength);
  write(value, out);
  return out.bytes();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function write(value: unknown, out: JsonOut): void {
  if (value instanceof GradientMap) {
    out.room(value.maxJsonBytes());
    out.n = value.writeJson(out.buf, out.n);
    return;
  }
  if (value instanceof JsonBytes) {
    out.room(value.bytes.byteLength);
    out.buf.set(value.bytes, out.n);
    out.n += value.bytes.byteLength;
    return;
  }
  if (!isPlainObject(value)) {
    out.text(JSON.stringify(value) ?? "null");
    return;
  }
  let text = "{";
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue; // as JSON.stringify skips them
    text += `${first ? "" : ","}${JSON.stringify(k)}:`;
    first = false;
    if (v instanceof GradientMap || v instanceof JsonBytes || isPlainObject(v)) {
      out.text(text);
      text = "";
      write(v, out);
    } else text += JSON.stringify(v) ?? "null";
  }
  out.text(`${text}}`);
}
