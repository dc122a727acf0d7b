import { describe, expect, it } from "vitest";
import { newRequestId } from "../../src/monitoring/request-id.js";
import { requestId } from "../../src/http/request-lifecycle.js";

// Issue 49 item 8: request ids made by the server are UUIDs version 7, in time order, so that prediction records'
// primary key (experiment, request id) grows at its right edge instead of at random leaf pages.

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("newRequestId", () => {
  it("is a UUID version 7 carrying the time in milliseconds", () => {
    const at = Date.UTC(2026, 10, 29, 12, 0, 0, 123);
    const id = newRequestId(at);
    expect(id).toMatch(V7);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it("sorts later ids after earlier ones, as text too, and never repeats", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => newRequestId(1_700_000_000_000 + Math.floor(i / 10)));
    const byMs = ids.filter((_, i) => i % 10 === 0);
    expect([...byMs].sort()).toEqual(byMs);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("is what a request without a usable x-request-id gets; a sane one of the caller's is kept", () => {
    expect(requestId(undefined)).toMatch(V7);
    expect(requestId("bad id with spaces")).toMatch(V7);
    expect(requestId("client-chosen.1")).toBe("client-chosen.1");
  });
});
