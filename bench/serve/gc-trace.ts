/** `node --trace-gc` output, tallied per isolate (worker-gc.ts and idle-gc.ts read it). */
export interface IsolateCollections {
  mc: number;
  scavenge: number;
  mcMs: number[];
  /** The heap after the isolate's last collection: used and committed MB, as --trace-gc prints them ("-> 11.0 (26.0) MB"). */
  lastHeap: string;
}

/** Mark-compacts (with their pauses) and scavenges of each isolate in `lines`, in order of first appearance. */
export function tallyCollections(lines: Iterable<string>): Map<string, IsolateCollections> {
  const per = new Map<string, IsolateCollections>();
  for (const l of lines) {
    const m = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact)[^,]*, ([\d.]+) \//.exec(l);
    if (!m) continue;
    const g = per.get(m[1]) ?? { mc: 0, scavenge: 0, mcMs: [], lastHeap: "" };
    g.lastHeap = /-> ([\d.]+ \([\d.]+\)) MB/.exec(l)?.[1] ?? g.lastHeap;
    if (m[2] === "Scavenge") g.scavenge++;
    else {
      g.mc++;
      g.mcMs.push(Number(m[3]));
    }
    per.set(m[1], g);
  }
  return per;
}
