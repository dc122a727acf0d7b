import { describe, expect, it } from "vitest";
import { objectElements, tag } from "../../src/datasets/voc-xml.js";
import { generatedMessages } from "../helpers/generated-text.js";

// The VOC reader's lookups were these regexes (issue 42, finding 2: polynomial in a user's XML file). Kept here,
// verbatim, as the reference the indexOf rewrite must agree with on generated XML.
const oldTag = (xml: string, name: string) => xml.match(new RegExp(`<${name}>\\s*([^<]*?)\\s*</${name}>`))?.[1];
const oldObjects = (xml: string) => xml.match(/<object>[\s\S]*?<\/object>/g) ?? [];

const PIECES = [
  "<object>",
  "</object>",
  "<name>",
  "</name>",
  "<xmin>",
  "</xmin>",
  "RBC",
  "12",
  " ",
  "  ",
  "\n",
  "\t",
  "<",
  ">",
  "/",
  "name",
  "x y",
];

describe("VOC XML lookups", () => {
  it("find what the old regexes found, on 20000 generated documents", () => {
    let found = 0;
    for (const xml of generatedMessages(3, 20_000, PIECES, [""], 24)) {
      for (const name of ["name", "xmin"]) {
        expect([xml, name, tag(xml, name)]).toEqual([xml, name, oldTag(xml, name)]);
        if (oldTag(xml, name) !== undefined) found++;
      }
      expect([xml, objectElements(xml)]).toEqual([xml, oldObjects(xml)]);
    }
    expect(found).toBeGreaterThan(1_000);
  });

  it("read a real annotation", () => {
    const xml =
      "<annotation><filename> a.jpg </filename><object>\n <name>WBC</name><bndbox><xmin> 3 </xmin></bndbox></object><object><name>RBC</name></object></annotation>";
    expect(tag(xml, "filename")).toBe("a.jpg");
    expect(objectElements(xml).map((o) => tag(o, "name"))).toEqual(["WBC", "RBC"]);
    expect(tag(objectElements(xml)[0], "xmin")).toBe("3");
  });
});
