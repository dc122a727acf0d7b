// What a catalog message needs: its keys and the {{values}} each names, read from the JSON itself. Shared by the
// generator of error-keys.ts (scripts/error-keys.ts) and the tests that check call sites against the catalog.

/** "a.b" -> string for every leaf of a nested catalog object. */
export function flattenCatalog(o: unknown, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object") for (const [kk, vv] of flattenCatalog(v, key)) out.set(kk, vv);
    else out.set(key, String(v));
  }
  return out;
}

/** The values a message names: {{name}} and {{name, format}}, also inside a nested $t(...). */
export function placeholdersOf(text: string): string[] {
  // A scan, not a global regex: each {{ is read once up to its }} (a regex retried at every {{ is quadratic).
  const names = new Set<string>();
  for (let open = text.indexOf("{{"); open >= 0; open = text.indexOf("{{", open + 2)) {
    const close = text.indexOf("}}", open + 2);
    if (close < 0) break;
    const name = text
      .slice(open + 2, close)
      .split(",")[0]
      .trim();
    if (/^\w+$/.test(name)) names.add(name);
  }
  return [...names].sort();
}

const PLURAL = /_(zero|one|two|few|many|other)$/;

/** Each raisable key (plural forms folded into one, which takes `count`) with the values it needs. */
export function keysWithValues(flat: Map<string, string>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [key, text] of flat) {
    const plural = PLURAL.test(key);
    const base = key.replace(PLURAL, "");
    const names = out.get(base) ?? new Set<string>();
    for (const n of placeholdersOf(text)) names.add(n);
    if (plural) names.add("count");
    out.set(base, names);
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}
