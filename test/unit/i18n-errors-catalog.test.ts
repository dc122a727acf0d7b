import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { errorKeysSource, ERROR_KEYS_FILE } from "../../scripts/error-keys.js";
import { msg, say } from "../../src/errors.js";
import { flattenCatalog, keysWithValues } from "../../src/i18n/catalog-keys.js";
import { LANGUAGES, readCatalog, setMissingValueHook, translate } from "../../src/i18n/index.js";

// The errors namespace of the one catalog (locales/<lng>/errors.json): the keys an error is raised with, typed
// for the compiler by the generated src/i18n/error-keys.ts, so a call site that leaves out a value its message
// names (in either language) does not build; and at run time, no message is said with a value missing.

const catalog = readCatalog();
const raisable = [...keysWithValues(flattenCatalog(catalog.en.errors))].filter(([k]) => !k.startsWith("code.") && !k.startsWith("status."));

afterEach(() => setMissingValueHook(() => {}));

describe("the errors catalog", () => {
  it("src/i18n/error-keys.ts is generated from the current catalog (npx tsx scripts/error-keys.ts)", async () => {
    expect(fs.readFileSync(ERROR_KEYS_FILE, "utf8")).toBe(await errorKeysSource(catalog.en.errors));
  });

  it("names the same values in English and Spanish for every key", () => {
    const es = keysWithValues(flattenCatalog(catalog.es.errors));
    for (const [key, names] of raisable) expect(es.get(key), key).toEqual(names);
  });

  it("says every key in both languages with the values its call sites must give, none left unfilled", () => {
    const missing: string[] = [];
    setMissingValueHook((key, name) => missing.push(`${key}: ${name}`));
    expect(raisable.length).toBeGreaterThan(200);
    for (const [key, names] of raisable) {
      const values = Object.fromEntries(names.map((n) => [n, n === "count" ? 2 : n === "status" ? "training" : `<${n}>`]));
      for (const lng of LANGUAGES) {
        const text = translate(lng, `errors:${key}`, values);
        expect(text, `${lng}:${key}`).not.toMatch(/\{\{|\$t\(|^errors:/);
        for (const n of names.filter((x) => x !== "count" && x !== "status")) expect(text, `${lng}:${key}`).toContain(`<${n}>`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("reports a value left out at run time (the check above can fail)", () => {
    const missing: string[] = [];
    setMissingValueHook((_key, name) => missing.push(name));
    translate("es", "errors:experiment.not_found", {});
    expect(missing).toEqual(["id"]);
  });

  it("makes a call site give every value its message names (checked by tsc, which also reads this file)", () => {
    // Each line below must stay a type error: if the generated types stopped naming a message's values,
    // `tsc --noEmit` would fail on the unused @ts-expect-error.
    // @ts-expect-error experiment.not_found names {{id}}
    const noValues = () => msg("experiment.not_found");
    // @ts-expect-error a misspelt value
    const misspelt = () => msg("experiment.not_found", { idd: 3 });
    // @ts-expect-error a key the catalog does not have
    const unknown = () => msg("experiment.no_such_message");
    // @ts-expect-error a message without values takes none
    const extra = () => msg("auth.missing_api_key", { id: 1 });
    expect([noValues, misspelt, unknown, extra].every((f) => typeof f === "function")).toBe(true);
    expect(say(msg("experiment.not_found", { id: 3 }), "es")).toBe("no se encontró el experimento 3");
  });
});
