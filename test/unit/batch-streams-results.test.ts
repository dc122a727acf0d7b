import { describe, expect, it } from "vitest";
import { EventHub } from "../../src/experiments/event-hub.js";
import { eventStream } from "../../src/experiments/event-stream.js";
import { OverlayNames, overlayClass } from "../../src/batches/overlays.js";
import { resultHeader, resultLines } from "../../src/batches/results.js";
import type { ServedManifest } from "../../src/serving/manifest.js";

// The batch side of issue 38 item 3 without a server: the experiments' event hub and stream, generalised, follow a
// batch's row (one read per tick for all readers, ending at done/failed); a detection batch's results.csv has one
// line per box; overlay file names and the class an overlay shows.

interface Snap {
  seq: number;
  status: string;
}

describe("a batch's snapshots through the generic hub", () => {
  it("many readers share one read per tick; each gets the state now, then each change, and ends at the terminal one", async () => {
    let state: Snap = { seq: 1, status: "queued" };
    let reads = 0;
    const source = {
      async eventsAfter(_key: string, after: number): Promise<Snap[]> {
        reads++;
        return state.seq > after ? [state] : [];
      },
    };
    const hub = new EventHub<Snap>(source, (e) => e.status === "done", { pollMs: 500, autoPoll: false });
    const gone = new AbortController();
    const got: string[][] = [];
    const readers = Array.from({ length: 20 }, (_, i) => {
      got[i] = [];
      return (async () => {
        for await (const item of eventStream(hub, source, "b1", 0, {
          signal: gone.signal,
          maxLifetimeMs: 3_600_000,
          keepAliveMs: 3_600_000,
        }))
          if ("event" in item) got[i]!.push(item.event.status);
      })();
    });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await hub.pollOnce("b1");
    await settle();
    state = { seq: 2, status: "running" };
    await hub.pollOnce("b1");
    await settle();
    state = { seq: 3, status: "done" };
    await hub.pollOnce("b1");
    await Promise.all(readers);
    expect(reads).toBe(3);
    for (const g of got) expect(g).toEqual(["queued", "running", "done"]);
    expect(hub.activePollers).toBe(0);
  });
});

const detection = {
  kind: "detection",
  problem: "detection",
  classes: [
    { index: 0, name: "nodule" },
    { index: 1, name: "mass" },
  ],
} as unknown as ServedManifest;

describe("results.csv of a detection batch", () => {
  it("one line per box, numbered, with the class by name and the corners; one line for an image without a box or with an error", () => {
    expect(resultHeader(detection, { images: true })).toBe("image,box,class,score,x_min,y_min,x_max,y_max,error\n");
    const answer = {
      boxes: [
        [1, 2, 30.5, 40],
        [5, 6, 7, 8],
      ],
      score: [0.9, 0.4],
      classification: [1, 0],
    };
    expect(resultLines(detection, "a.png", answer, [], undefined)).toBe("a.png,1,mass,0.9,1,2,30.5,40,\na.png,2,nodule,0.4,5,6,7,8,\n");
    expect(resultLines(detection, "b.png", { boxes: [], score: [], classification: [] }, [], undefined)).toBe("b.png,0,,,,,,,\n");
    expect(resultLines(detection, "c.png", undefined, [], "not an image")).toBe("c.png,,,,,,,,not an image\n");
  });
});

describe("overlays", () => {
  it("are named as the images, with .png; two that would meet keep their extension", () => {
    const names = new OverlayNames();
    expect(["scans/p01.jpg", "scans/p01.png", "p02.tif", "P02.png", "x/y.z/img"].map((n) => names.name(n))).toEqual([
      "scans/p01.png",
      "scans/p01.png.png",
      "p02.png",
      "P02.png.png",
      "x/y.z/img.png",
    ]);
  });

  it("show the predicted class's map: the one with a map, or of several the highest score", () => {
    expect(overlayClass({ score: [0.3, 0.7], gradients: { "1": [] } })).toBe("1");
    expect(overlayClass({ score: [0.9, 0.6, 0.95], gradients: { "0": [], "2": [] } })).toBe("2");
    expect(overlayClass({ score: [0.1, 0.2], gradients: {} })).toBeUndefined();
  });
});
