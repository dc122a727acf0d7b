import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The dashboard's string catalogs: every namespace exists in both languages with the same keys and the same
// {{placeholders}}, so a string added in English and forgotten in Spanish (or a typo in a variable) fails here
// instead of showing a half-translated page.

const LOCALES = path.resolve(import.meta.dirname, "../../locales");

function flatten(o: unknown, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object") for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
    else out.set(key, String(v));
  }
  return out;
}

const read = (lng: string, ns: string) => flatten(JSON.parse(fs.readFileSync(path.join(LOCALES, lng, `${ns}.json`), "utf8")));
const namespaces = (lng: string) =>
  fs
    .readdirSync(path.join(LOCALES, lng))
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -5))
    .sort();
const placeholders = (s: string) => [...s.matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1]).sort();
// i18next's plural forms: Spanish and English both have _one/_other; a key may carry _zero too.
const base = (k: string) => k.replace(/_(zero|one|two|few|many|other)$/, "");

describe("the one string catalog (locales/, read by the dashboard and the server)", () => {
  it("has the same namespaces in English and Spanish", () => {
    expect(namespaces("en").length).toBeGreaterThan(0);
    expect(namespaces("es")).toEqual(namespaces("en"));
  });

  for (const ns of namespaces("en")) {
    it(`${ns}: every key in both languages, with the same placeholders, none empty`, () => {
      const en = read("en", ns),
        es = read("es", ns);
      expect([...new Set([...es.keys()].map(base))].sort()).toEqual([...new Set([...en.keys()].map(base))].sort());
      for (const [k, v] of en) {
        const other = es.get(k) ?? es.get(`${base(k)}_other`) ?? "";
        expect(other.trim(), `es:${ns}:${k}`).not.toBe("");
        expect(placeholders(other), `es:${ns}:${k}`).toEqual(placeholders(v));
      }
    });
  }

  // A single-brace {name} is printed as it is (the model card's old catalog used that form, and a merge once kept
  // it): a value is {{name}}. A route's own path parameter (/v1/models/{id}/outcomes) is text, not a value.
  it("has no single-brace placeholder, which would print literally", () => {
    const stray: string[] = [];
    for (const lng of ["en", "es"])
      for (const ns of namespaces(lng))
        for (const [k, v] of read(lng, ns)) if (/(?<![{/])\{[A-Za-z_]+\}(?!\})/.test(v)) stray.push(`${lng}:${ns}:${k}`);
    expect(stray).toEqual([]);
  });
});
