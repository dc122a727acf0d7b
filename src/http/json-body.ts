import type { Response } from "express";
import { GradientMap } from "../serving/postprocess.js";

/**
 * JSON response bodies. Plain objects are walked key by key so that Grad-CAM maps (GradientMap, ~200,000
 * integers each) are written straight from their bytes instead of through JSON.stringify of number arrays,
 * which cost ~8 ms per vision prediction, more than the model. Everything else is JSON.stringify, so the text
 * is what res.json would send. No ETag: Express hashes every body for one, and API responses here are not
 * conditional GETs of stable documents.
 */
/**
 * A body already encoded as JSON, e.g. a prediction serialised on the inference worker thread that computed it:
 * written as it is. toJSON gives the value back for anything that stringifies it another way.
 */
export class JsonBytes {
  constructor(readonly bytes: Uint8Array) {}

  toJSON(): unknown {
    return JSON.parse(Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString("utf8"));
  }
}

export function encodeJson(value: unknown): Buffer {
  if (value instanceof JsonBytes) return Buffer.from(value.bytes.buffer, value.bytes.byteOffset, value.bytes.byteLength);
  const parts: Array<string | Buffer> = [];
  write(value, parts);
  return Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function write(value: unknown, parts: Array<string | Buffer>): void {
  if (value instanceof GradientMap) {
    parts.push(value.toJsonBytes());
    return;
  }
  if (value instanceof JsonBytes) {
    parts.push(encodeJson(value));
    return;
  }
  if (!isPlainObject(value)) {
    parts.push(JSON.stringify(value) ?? "null");
    return;
  }
  let text = "{";
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue; // as JSON.stringify skips them
    text += `${first ? "" : ","}${JSON.stringify(k)}:`;
    first = false;
    if (v instanceof GradientMap || isPlainObject(v)) {
      parts.push(text);
      text = "";
      write(v, parts);
    } else text += JSON.stringify(v) ?? "null";
  }
  parts.push(`${text}}`);
}

export function sendJson(res: Response, body: unknown): void {
  const bytes = encodeJson(body);
  if (!res.get("content-type")) res.set("content-type", "application/json; charset=utf-8");
  res.set("content-length", String(bytes.length));
  res.end(bytes);
}
