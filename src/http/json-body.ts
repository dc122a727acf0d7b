import type { ServerResponse } from "node:http";
import { encodeJson, JsonBytes } from "../serving/json-encode.js";

export { encodeJson, JsonBytes, JsonOut } from "../serving/json-encode.js";

/**
 * JSON response bodies, encoded by src/serving/json-encode.ts (maps written from their bytes; otherwise the text
 * res.json would send). No ETag: Express hashes every body for one, and API responses here are not conditional
 * GETs of stable documents. Takes node's response, which Express's extends: the /predict lane (predict-lane.ts)
 * sends with it too.
 */
export function sendJson(res: ServerResponse, body: unknown): void {
  const bytes = encodeJson(body);
  if (!res.getHeader("content-type")) res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", String(bytes.length));
  // "close" comes after "finish" (the bytes are with the kernel) or after an aborted connection (the write was
  // cancelled): either way nothing reads the bytes any more.
  if (body instanceof JsonBytes && body.release) res.once("close", body.release);
  res.end(bytes);
}
