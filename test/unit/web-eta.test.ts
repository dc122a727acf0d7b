import { describe, expect, it } from "vitest";
import { formatEta, steadyEta } from "../../web/src/lib/eta";

// The running build's "about N left" (issue 38 item 6: an ETA that jumped between events).

describe("the shown time left", () => {
  it("the first estimate is shown as it is", () => {
    expect(steadyEta(null, 120, 0)).toEqual({ seconds: 120, atMs: 0 });
  });

  it("counts down between events and moves a third of the way toward a new estimate, not all of it", () => {
    const first = steadyEta(null, 120, 0);
    // 10 s later the pipeline says 40 s (a fast trial), then 180 s (a slow one): the page goes 110 -> ~87 -> ~117
    const second = steadyEta(first, 40, 10_000);
    expect(second.seconds).toBeCloseTo(110 + (40 - 110) / 3, 6);
    const third = steadyEta(second, 180, 20_000);
    expect(third.seconds).toBeCloseTo(second.seconds - 10 + (180 - (second.seconds - 10)) / 3, 6);
    // raw estimates swung 120 -> 40 -> 180; the shown ones stay within a much narrower band
    expect(Math.max(120, second.seconds, third.seconds) - Math.min(120, second.seconds, third.seconds)).toBeLessThan(40);
  });

  it("a figure past its own countdown gives way to the new estimate at once", () => {
    expect(steadyEta({ seconds: 5, atMs: 0 }, 60, 30_000)).toEqual({ seconds: 60, atMs: 30_000 });
  });

  it("is written coarsely", () => {
    expect(formatEta(8)).toBe("a few seconds");
    expect(formatEta(44)).toBe("40 s");
    expect(formatEta(299)).toBe("5 min");
    expect(formatEta(3 * 3600 + 125)).toBe("3 h 2 min");
    expect(formatEta(-1)).toBe("–");
  });
});
