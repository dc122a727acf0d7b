import { execFileSync } from "node:child_process";
import fs from "node:fs";

/**
 * dcmtk (Debian package `dcmtk`), the independent reader of the DICOM objects Builder writes back to the PACS:
 * dcmdump prints every attribute, dsrdump the SR's content tree, dsr2xml the tree as XML (with the SCOORD data in
 * full). dsr2xml and dsrdump refuse a file that is not a valid SR document (they exit non-zero).
 */
export const haveDcmtk = ["/usr/bin/dcmdump", "/usr/bin/dsrdump", "/usr/bin/dsr2xml"].every((f) => fs.existsSync(f));

/** Every attribute; +U8: texts converted to UTF-8 from the file's character set (which it then shows as ISO_IR 192). */
export const dcmdump = (file: string, utf8 = true) =>
  execFileSync("dcmdump", ["-q", "+L", "-M", ...(utf8 ? ["+U8"] : []), file], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 });

export const dsr2xml = (file: string) => execFileSync("dsr2xml", ["-q", "+U8", file], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 });

export interface SrItem {
  depth: number;
  relationship: string;
  type: string;
  meaning: string;
  value: string;
}

/** The SR's content items in document order, from dsrdump's tree ("<contains NUM:(,,"Model score")="0.7" ...>"). */
export function srItems(file: string): SrItem[] {
  const out = execFileSync("dsrdump", ["-q", "+U8", "+Pl", "+Pu", file], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  const items: SrItem[] = [];
  for (const line of out.split("\n")) {
    const m = /^(\s*)<(?:([a-z ]+) )?([A-Z]+):\([^,]*,[^,]*,"([^"]*)"\)=(.*)>$/.exec(line);
    if (!m) continue;
    let value = m[5];
    const quoted = /^"(.*)"(?: \(.*\))?$/.exec(value);
    if (quoted) value = quoted[1];
    items.push({ depth: m[1].length / 2, relationship: m[2] ?? "", type: m[3], meaning: m[4], value });
  }
  return items;
}

/** The values of the items with this concept name. */
export const srValues = (items: SrItem[], meaning: string) => items.filter((i) => i.meaning === meaning).map((i) => i.value);

/** The SCOORD polylines' points, from dsr2xml ("x/y,x/y,..."). */
export function srPolylines(file: string): number[][] {
  return [...dsr2xml(file).matchAll(/<scoord type="POLYLINE">[\s\S]*?<data>([^<]*)<\/data>/g)].map((m) =>
    m[1].trim().split(/[,/]/).map(Number),
  );
}
