import fs from "node:fs";
import { once } from "node:events";

/** RFC 4180 with every field quoted: the normalised table the Python pipelines read with csv.DictReader. */
export function csvLine(values: string[]): string {
  return values.map((v) => `"${v.replace(/"/g, '""')}"`).join(",") + "\r\n";
}

/** Streams rows to `file` (UTF-8, no BOM), honouring back-pressure so a large table never sits in one string. */
export async function writeCsv(file: string, header: string[], rows: Iterable<string[]>): Promise<void> {
  const tmp = `${file}.partial`;
  const out = fs.createWriteStream(tmp);
  const closed = once(out, "close");
  try {
    if (!out.write(csvLine(header))) await once(out, "drain");
    for (const r of rows) {
      if (!out.write(csvLine(r))) await once(out, "drain");
    }
  } finally {
    out.end();
    await closed;
  }
  await fs.promises.rename(tmp, file);
}
