import { randomBytes } from "node:crypto";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import { msg, say, type Message } from "../errors.js";
import type { PacsTarget } from "./connection.js";

/**
 * STOW-RS (PS3.18 10.5): POST {root}/studies/{study} with the Part 10 file as the one part of a
 * multipart/related; type="application/dicom" body. 200 is stored; 202 or a FailedSOPSequence in the answer is a
 * refusal of the object, which is not retried; a network failure, a timeout, 408, 429 and 5xx are retried with a
 * doubling wait. The credentials go with the request; the guard follows no redirect of a POST.
 */

export interface StowOutcome {
  ok: boolean;
  /** The last HTTP status, or null when the PACS was never reached. */
  status: number | null;
  attempts: number;
  /** Why it failed, in English words (no patient data), for the audit log. */
  reason?: string;
  /** The same in catalog words, for a reader in another language. */
  text?: Message;
}

const RETRIED = (status: number) => status === 408 || status === 429 || status >= 500;

export async function stow(
  guard: OutboundGuard,
  target: PacsTarget,
  study: string,
  file: Buffer,
  o: { attempts: number; baseMs: number; sleep?: (ms: number) => Promise<void> },
): Promise<StowOutcome> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const boundary = `builder-${randomBytes(12).toString("hex")}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Type: application/dicom\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const headers: Record<string, string> = {
    "content-type": `multipart/related; type="application/dicom"; boundary=${boundary}`,
    accept: "application/dicom+json",
    ...(target.authorization ? { authorization: target.authorization } : {}),
  };
  let last: StowOutcome = { ok: false, status: null, attempts: 0 };
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    if (attempt > 1) await sleep(o.baseMs * 2 ** (attempt - 2));
    try {
      const res = await guard.fetch(`${target.root}/studies/${encodeURIComponent(study)}`, {
        method: "POST",
        headers,
        body,
        maxBytes: 1024 * 1024,
      });
      if (res.status === 200 && !failedSop(res.body)) return { ok: true, status: 200, attempts: attempt };
      last = { ok: false, status: res.status, attempts: attempt, ...why(refusal(res.status)) };
      if (!RETRIED(res.status)) return last;
    } catch (err) {
      // The guard refuses an address for good (not allowed, private): no retry changes that.
      if (err instanceof OutboundRefusal && err.status === 403)
        return { ok: false, status: null, attempts: attempt, reason: err.message, ...(err.text ? { text: err.text } : {}) };
      last = { ok: false, status: null, attempts: attempt, ...why(msg("pacs.stow_unreachable", { why: (err as Error).message })) };
    }
  }
  return last;
}

/** Whether a STOW-RS answer lists the object as failed (FailedSOPSequence, 0008,1198). */
function failedSop(body: Buffer): boolean {
  try {
    const json = JSON.parse(body.toString("utf8")) as Record<string, { Value?: unknown[] }>;
    return Boolean(json["00081198"]?.Value?.length);
  } catch {
    return false;
  }
}

function refusal(status: number): Message {
  if (status === 401 || status === 403) return msg("pacs.credentials_refused", { status });
  if (status === 404) return msg("pacs.stow_no_service");
  if (status === 409 || status === 202 || status === 200) return msg("pacs.stow_object_refused", { status });
  return msg("pacs.stow_http", { status });
}

/** A failure's words both ways: English for the audit log, the catalog's for whoever reads it later. */
const why = (text: Message) => ({ reason: say(text, "en"), text });
