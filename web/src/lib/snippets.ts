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

export function predictSnippets(origin: string, experimentId: number, model: Pick<Model, "kind" | "inputs">, values?: Array<number | null>): Snippets {
  const url = `${origin.replace(/\/+$/, "")}/v1/experiments/${experimentId}/predict`;
  const message = exampleMessage(model, values);
  const body = JSON.stringify({ message });
  const shellBody = body.replace(/'/g, `'\\''`);
  const comment =
    model.kind === "tabular"
      ? `message: one number per column, in this order: ${(model.inputs.data_cols ?? []).join(", ")}`
      : "message: an image URI (https://, data:image/...;base64, or gs://<bucket>/<path>)";
  return {
    curl: [
      `# ${comment}`,
      `curl -sS -X POST '${url}' \\`,
      `  -H "Authorization: Bearer $BUILDER_API_KEY" \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d '${shellBody}'`,
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

function pyLiteral(v: string | Array<number | null>): string {
  return typeof v === "string" ? JSON.stringify(v) : `[${v.map((x) => (x === null ? "None" : x)).join(", ")}]`;
}
