import type { Model } from "../api/types";

// The exact /predict calls a program makes for one model, in curl, Python and JavaScript. The key is always the
// $BUILDER_API_KEY environment variable: the page never prints a real key into a snippet.

export interface Snippets {
  curl: string;
  python: string;
  javascript: string;
}

/**
 * A message that shows the shape: an image URI, or one number per data_cols entry (the example values given; null
 * for an unknown value of a column that takes it).
 */
export function exampleMessage(model: Pick<Model, "kind" | "inputs">, values?: Array<number | null>): string | Array<number | null> {
  if (model.kind !== "tabular") return "https://example.org/image.png";
  const cols = model.inputs.data_cols ?? [];
  return cols.map((_, i) => (values?.[i] === undefined ? 0 : values[i])); // null stays null
}

export function predictSnippets(
  origin: string,
  experimentId: number,
  model: Pick<Model, "kind" | "inputs">,
  values?: Array<number | null>,
): Snippets {
  const url = `${origin.replace(/\/+$/, "")}/v1/experiments/${experimentId}/predict`;
  if (model.kind !== "tabular") return imageFileSnippets(url);
  const message = exampleMessage(model, values);
  const body = JSON.stringify({ message });
  const shellBody = shellQuote(body);
  const comment =
    model.kind === "tabular"
      ? `message: one number per column, in this order: ${(model.inputs.data_cols ?? []).map(commentSafeName).join(", ")}`
      : "message: an image URI (https://, data:image/...;base64, or gs://<bucket>/<path>)";
  return {
    curl: [
      `# ${comment}`,
      `curl -sS -X POST ${shellQuote(url)} \\`,
      `  -H "Authorization: Bearer $BUILDER_API_KEY" \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d ${shellBody}`,
    ].join("\n"),
    python: [
      "import os",
      "import requests",
      "",
      `# ${comment}`,
      "response = requests.post(",
      `    ${JSON.stringify(url)},`,
      '    headers={"Authorization": f"Bearer {os.environ[\'BUILDER_API_KEY\']}"},',
      `    json={"message": ${pyLiteral(message)}},`,
      "    timeout=60,",
      ")",
      "response.raise_for_status()",
      "print(response.json())",
    ].join("\n"),
    javascript: [
      `// ${comment}`,
      `const response = await fetch(${JSON.stringify(url)}, {`,
      '  method: "POST",',
      '  headers: { Authorization: `Bearer ${process.env.BUILDER_API_KEY}`, "Content-Type": "application/json" },',
      `  body: JSON.stringify({ message: ${JSON.stringify(message)} }),`,
      "});",
      "if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);",
      "console.log(await response.json());",
    ].join("\n"),
  };
}

/** The file name the image snippets read; the comment says to change it. */
export const SNIPPET_IMAGE_FILE = "scan.png";

/**
 * An image model's calls send a local file, what a clinician has at hand, as a data: URI. curl reads the body from
 * stdin: a base64 image as a command-line argument would pass the kernel's 128 KiB limit on one argument.
 */
function imageFileSnippets(url: string): Snippets {
  const file = SNIPPET_IMAGE_FILE;
  // DICOM (issue 41): the same call with a .dcm file, or the PACS's DICOMweb URL instead of a data: URI.
  const dicom = [
    `A DICOM from disk: read scan.dcm instead and send it as "data:application/dicom;base64,..."`,
    `or the PACS's DICOMweb URL: {"message": "https://pacs.hospital.example/dicom-web/studies/<study>/series/<series>/instances/<instance>"}`,
    "(a PACS on a private address needs the server's FETCH_ALLOW_HOSTS to allow it)",
  ];
  const comment = `message: an image URI. Here the local file ${file} (change the name; PNG or JPEG) as a data: URI; a link works too: {"message": "https://example.org/image.png"}`;
  return {
    curl: [
      `# ${comment}`,
      ...dicom.map((l) => `# ${l}`),
      `printf '{"message":"data:image/png;base64,%s"}' "$(base64 < ${file} | tr -d '\\n')" |`,
      `  curl -sS -X POST ${shellQuote(url)} \\`,
      `  -H "Authorization: Bearer $BUILDER_API_KEY" \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  --data-binary @-`,
    ].join("\n"),
    python: [
      "import base64",
      "import os",
      "import requests",
      "",
      `# ${comment}`,
      ...dicom.map((l) => `# ${l}`),
      `with open(${JSON.stringify(file)}, "rb") as f:`,
      '    image = "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")',
      "response = requests.post(",
      `    ${JSON.stringify(url)},`,
      '    headers={"Authorization": f"Bearer {os.environ[\'BUILDER_API_KEY\']}"},',
      '    json={"message": image},',
      "    timeout=60,",
      ")",
      "response.raise_for_status()",
      "print(response.json())",
    ].join("\n"),
    javascript: [
      'import { readFile } from "node:fs/promises";',
      "",
      `// ${comment}`,
      ...dicom.map((l) => `// ${l}`),
      `const image = "data:image/png;base64," + (await readFile(${JSON.stringify(file)})).toString("base64");`,
      `const response = await fetch(${JSON.stringify(url)}, {`,
      '  method: "POST",',
      '  headers: { Authorization: `Bearer ${process.env.BUILDER_API_KEY}`, "Content-Type": "application/json" },',
      "  body: JSON.stringify({ message: image }),",
      "});",
      "if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);",
      "console.log(await response.json());",
    ].join("\n"),
  };
}

function pyLiteral(v: string | Array<number | null>): string {
  return typeof v === "string" ? JSON.stringify(v) : `[${v.map((x) => (x === null ? "None" : x)).join(", ")}]`;
}

/** One single-quoted shell word: nothing inside is expanded; a ' closes, adds an escaped quote and reopens. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Characters that may not appear as they are in a one-line comment of a snippet someone copies and runs:
 * control characters (a line feed ends a #/ comment and starts a command; a carriage return does the same when
 * pasted into a terminal), JavaScript's other line terminators U+2028/U+2029, format characters (the bidi
 * overrides of "Trojan Source" make code look like comment, and zero-width ones hide text), and the quote and
 * backslash of the escaped form itself.
 */
const UNSAFE_IN_COMMENT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"\\]/u;
const UNSAFE_IN_COMMENT_ALL = new RegExp(UNSAFE_IN_COMMENT.source, "gu");

/**
 * A column name as a comment shows it: as it is when harmless, else as a double-quoted string whose unsafe
 * characters are written as escapes (\n, \r, \t, \u2028, ...) as in a JSON string, on one line. A CSV header may
 * hold any of these: issue 42 found "radius\ntouch PWNED #" breaking out of the comment of the curl snippet.
 */
export function commentSafeName(name: string): string {
  if (!UNSAFE_IN_COMMENT.test(name) && !name.includes(",") && name.trim() === name && name !== "") return name;
  const named: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\" };
  const escaped = name.replace(UNSAFE_IN_COMMENT_ALL, (c) => named[c] ?? unicodeEscape(c));
  return `"${escaped}"`;
}

/** \u2028 as JSON and the snippet languages write it; \u{e0001} beyond the 16-bit range. */
function unicodeEscape(c: string): string {
  const code = c.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}
