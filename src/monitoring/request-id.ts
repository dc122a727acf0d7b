import { randomUUID } from "node:crypto";

/**
 * A new request id: a UUID version 7 (RFC 9562), the Unix time in milliseconds in its first 48 bits and random bits
 * after, so that ids made later sort later. It is what a prediction record is kept under (the x-request-id), and
 * prediction_records' primary key is (experiment, request id): random ids (version 4) land anywhere in that index and
 * make every insert touch a random leaf page, which costs more and more as 190 days of records grow past the
 * database's cache; ids in time order all land at its right edge (issue 49 item 8,
 * bench/serve/notebook/2026-11-29-monitoring-hotpath.md). The random part is randomUUID's (74 random bits are left,
 * 62 of them after the variant), so ids stay as unguessable as before apart from the time they carry, which the
 * answer's own Date header tells anyway.
 */
export function newRequestId(now = Date.now()): string {
  const t = now.toString(16).padStart(12, "0");
  const r = randomUUID(); // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: keep what follows the version digit
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(15)}`;
}
