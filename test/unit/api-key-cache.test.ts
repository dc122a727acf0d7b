import { describe, expect, it } from "vitest";
import { ApiKeyCache } from "../../src/auth/api-key-cache.js";

describe("API-key cache", () => {
  it("serves nothing and keeps nothing until change notifications are being received", () => {
    const cache = new ApiKeyCache<string>(60_000);
    cache.put("h", "row", cache.begin());
    expect(cache.get("h")).toBeUndefined();
    cache.setListening(true);
    cache.put("h", "row", cache.begin());
    expect(cache.get("h")).toBe("row");
  });

  it("forgets everything when notifications may have been missed", () => {
    const cache = new ApiKeyCache<string>(60_000);
    cache.setListening(true);
    cache.put("h", "row", cache.begin());
    cache.setListening(false);
    expect(cache.get("h")).toBeUndefined();
    cache.setListening(true); // back: what was cached before the outage is not trusted
    expect(cache.get("h")).toBeUndefined();
  });

  it("drops a key on its notification, and does not cache a lookup that was in flight meanwhile", () => {
    const cache = new ApiKeyCache<string>(60_000);
    cache.setListening(true);
    cache.put("a", "a-row", cache.begin());
    const inFlight = cache.begin(); // a lookup of b starts, reads the row ...
    cache.invalidate("a"); // ... a change is announced before it returns
    cache.put("b", "b-row-maybe-stale", inFlight);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBeUndefined();
    cache.put("b", "b-row", cache.begin());
    expect(cache.get("b")).toBe("b-row");
  });

  it("expires entries after the TTL and keeps at most maxEntries", () => {
    const cache = new ApiKeyCache<number>(1_000, 3);
    cache.setListening(true);
    for (let i = 0; i < 5; i++) cache.put(`k${i}`, i, cache.begin(), 0);
    expect(["k0", "k1", "k2", "k3", "k4"].map((k) => cache.get(k, 500))).toEqual([undefined, undefined, 2, 3, 4]);
    expect(cache.get("k4", 1_000)).toBeUndefined();
  });

  it("a TTL of 0 turns it off", () => {
    const cache = new ApiKeyCache<string>(0);
    cache.setListening(true);
    cache.put("h", "row", cache.begin());
    expect(cache.get("h")).toBeUndefined();
  });
});
