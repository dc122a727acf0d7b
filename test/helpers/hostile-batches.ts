import fs from "node:fs";
import { ZipWriter } from "./zips.js";

// Batch inputs an attacker (or a broken export) sends, for the batch tests and bench/security/batch-bombs.ts. The
// table model they target is the serving fixtures' tabular_binary: age, sex {F, M}, bmi, site {north, south, east}.

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * An .xlsx whose every row's id is one shared string of `idChars` characters: the workbook stores the string once
 * and each row refers to it by number (`<v>0</v>`), so a small file becomes rows x idChars bytes of table. Built by
 * hand: a spreadsheet program would write the same parts.
 */
export function xlsxRepeatedId(opts: { rows: number; idChars: number; file?: string }): Buffer {
  const id = "P" + "x".repeat(opts.idChars - 1);
  const shared = [id, "F", "north", "patient_id", "age", "sex", "bmi", "site"];
  const s = (at: string, i: number) => `<c r="${at}" t="s"><v>${i}</v></c>`;
  const n = (at: string, v: number) => `<c r="${at}"><v>${v}</v></c>`;
  const rows: string[] = [`<row r="1">${s("A1", 3)}${s("B1", 4)}${s("C1", 5)}${s("D1", 6)}${s("E1", 7)}</row>`];
  for (let r = 2; r <= opts.rows + 1; r++)
    rows.push(`<row r="${r}">${s(`A${r}`, 0)}${n(`B${r}`, 40)}${s(`C${r}`, 1)}${n(`D${r}`, 25)}${s(`E${r}`, 2)}</row>`);
  const w = new ZipWriter(opts.file);
  w.add(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
  );
  w.add(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  w.add(
    "xl/workbook.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Export" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  );
  w.add(
    "xl/_rels/workbook.xml.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
  );
  w.add(
    "xl/sharedStrings.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${shared.length}" uniqueCount="${shared.length}">${shared.map((t) => `<si><t>${esc(t)}</t></si>`).join("")}</sst>`,
  );
  w.add(
    "xl/worksheets/sheet1.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows.join("")}</sheetData></worksheet>`,
  );
  return w.finish();
}

/** A CSV with the model's header, one data row, then one line of `bytes` characters (written in 1 MiB pieces). */
export function csvWithLongLine(file: string, bytes: number): void {
  const fd = fs.openSync(file, "w");
  try {
    fs.writeSync(fd, "patient_id,age,sex,bmi,site\nP1,40,F,25,north\nP2,");
    const piece = Buffer.alloc(1024 * 1024, "7");
    for (let left = bytes; left > 0; left -= piece.length) fs.writeSync(fd, left >= piece.length ? piece : piece.subarray(0, left));
    fs.writeSync(fd, ",F,25,north\n");
  } finally {
    fs.closeSync(fd);
  }
}

/** `rows` patients of the tabular_binary model, as a CSV. */
export function patientsCsv(rows: number): string {
  const lines = ["patient_id,age,sex,bmi,site"];
  for (let i = 0; i < rows; i++)
    lines.push(`P${i},${20 + (i % 70)},${i % 2 ? "M" : "F"},${18 + (i % 30)},${["north", "south", "east"][i % 3]}`);
  return lines.join("\n") + "\n";
}
