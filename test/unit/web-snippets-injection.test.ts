import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Model } from "../../web/src/api/types";
import { commentSafeName, predictSnippets } from "../../web/src/lib/snippets";

// Issue 42, finding 3: the Try-it snippets put data_cols inside a #/ comment, and a CSV header may hold a line
// break: the header "radius\ntouch PWNED #" made a curl snippet that, copied and run, created the file. Here every
// snippet is generated with hostile column names and actually run (bash, python3, node) against a stand-in for
// curl / requests / fetch in an empty folder: it must run cleanly, send the right body, create no file, and keep
// every name inside its one comment line.

/** Characters that end a line in at least one of the languages, or when pasted into a terminal (CR). */
const BREAKERS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\u0085", "\u000b", "\u000c"];
const PAYLOADS = [
  "touch PWNED_SH #", // shell
  "open('PWNED_PY', 'w') #", // Python
  "await import('node:fs').then((f) => f.writeFileSync('PWNED_JS', '')) //", // JavaScript
];
const HOSTILE = [
  ...BREAKERS.flatMap((b, i) => PAYLOADS.map((p) => `radius${i}${b}${p}`)),
  "`touch PWNED_BACKTICK`",
  "$(touch PWNED_SUBST)",
  "'; touch PWNED_QUOTE; '",
  '"double" and \\backslash\\',
  "*/ touch PWNED_BLOCK /*",
  "tab\there, comma",
  "\u202eRLO override\u202c and zero\u200bwidth",
  "\u001b[2Jescape",
  " padded ",
  "plain_name",
];

const model = { kind: "tabular", inputs: { data_cols: HOSTILE } } as unknown as Pick<Model, "kind" | "inputs">;
const values = HOSTILE.map((_, i) => i);
const snippets = predictSnippets("http://127.0.0.1:9", 5, model, values);
const expectedBody = { message: values };

/** Any line terminator of bash, Python, JavaScript or a terminal paste. */
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029\u0085\u000b\u000c]/;

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
function sandbox(): string {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), "snippet-"));
  dir = made;
  return made;
}

/** Runs a program in the folder; returns what it left there besides `keep`. */
function run(cwd: string, cmd: string, args: string[], env: Record<string, string>, keep: string[]) {
  const r = spawnSync(cmd, args, {
    cwd,
    env: { PATH: process.env.PATH!, HOME: cwd, BUILDER_API_KEY: "k-test", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  const left = fs.readdirSync(cwd).filter((f) => !keep.includes(f));
  return { status: r.status, stderr: r.stderr, stdout: r.stdout, left };
}

/** The column names as the comment lists them, read back (each quoted one parsed as the JSON string it is). */
function namesInComment(line: string): string[] {
  const list = line.slice(line.indexOf("in this order: ") + "in this order: ".length);
  const out: string[] = [];
  const token = /"((?:[^"\\]|\\.)*)"|([^,]+)/gy;
  for (let at = 0; at < list.length;) {
    token.lastIndex = at;
    const m = token.exec(list)!;
    out.push(
      m[1] !== undefined ? JSON.parse(`"${m[1].replace(/\\u\{([0-9a-f]+)\}/g, (_, h) => String.fromCodePoint(parseInt(h, 16)))}"`) : m[2]!,
    );
    at = token.lastIndex + (list.startsWith(", ", token.lastIndex) ? 2 : 0);
  }
  return out;
}

describe("Try-it snippets with hostile column names", () => {
  it.each(Object.entries(snippets) as Array<[string, string]>)(
    "%s: one comment line that holds every name, and no line break inside it",
    (_lang, text) => {
      const comment = text.split("\n").find((l) => l.includes("in this order:"))!;
      expect(comment).toMatch(/^(# |\/\/ )/);
      expect(LINE_BREAK.test(comment)).toBe(false);
      expect(/[\u202a-\u202e\u2066-\u2069\u200b\u001b]/.test(comment)).toBe(false);
      expect(namesInComment(comment)).toEqual(HOSTILE);
    },
  );

  it("curl: bash -n accepts it, and run against a stand-in curl it sends the body and creates no file", () => {
    const cwd = sandbox();
    fs.writeFileSync(path.join(cwd, "snippet.sh"), snippets.curl);
    expect(spawnSync("bash", ["-n", "snippet.sh"], { cwd }).status).toBe(0);
    fs.mkdirSync(path.join(cwd, "bin"));
    // The stand-in writes each argument it got on its own line; the body is the one after -d.
    fs.writeFileSync(path.join(cwd, "bin/curl"), '#!/bin/bash\nprintf "%s\\n" "$@" > "$(dirname "$0")/../args.txt"\n', { mode: 0o755 });
    const r = run(cwd, "bash", ["snippet.sh"], { PATH: `${path.join(cwd, "bin")}:${process.env.PATH}` }, ["snippet.sh", "bin", "args.txt"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.left).toEqual([]);
    const args = fs.readFileSync(path.join(cwd, "args.txt"), "utf8").split("\n");
    expect(JSON.parse(args[args.indexOf("-d") + 1]!)).toEqual(expectedBody);
    expect(args).toContain("Authorization: Bearer k-test");
  });

  it("Python: ast.parse finds one comment and the five statements, and run against a stand-in requests it creates no file", () => {
    const cwd = sandbox();
    fs.writeFileSync(path.join(cwd, "snippet.py"), snippets.python);
    const check = spawnSync(
      "python3",
      [
        "-c",
        "import ast, io, sys, tokenize; src = open('snippet.py', encoding='utf-8').read(); tree = ast.parse(src); " +
          "comments = [t.string for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.COMMENT]; " +
          "print(len(tree.body), len(comments))",
      ],
      { cwd, encoding: "utf8" },
    );
    expect(check.stderr).toBe("");
    expect(check.stdout.trim()).toBe("5 1"); // import os, import requests, response = ..., raise_for_status(), print(); one comment
    fs.writeFileSync(
      path.join(cwd, "requests.py"),
      "import json\nclass _R:\n    def raise_for_status(self): pass\n    def json(self): return {}\n" +
        "def post(url, headers, json, timeout):\n    import json as j\n    open('sent.json', 'w').write(j.dumps({'url': url, 'headers': headers, 'json': json}))\n    return _R()\n",
    );
    const r = run(cwd, "python3", ["snippet.py"], { PYTHONPATH: cwd, PYTHONDONTWRITEBYTECODE: "1" }, [
      "snippet.py",
      "requests.py",
      "sent.json",
    ]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.left).toEqual([]);
    const sent = JSON.parse(fs.readFileSync(path.join(cwd, "sent.json"), "utf8"));
    expect(sent.json).toEqual(expectedBody);
    expect(sent.headers.Authorization).toBe("Bearer k-test");
  });

  it("JavaScript: run as a module against a stand-in fetch, it sends the body and creates no file", () => {
    const cwd = sandbox();
    const standIn =
      "import { writeFileSync } from 'node:fs';\n" +
      "globalThis.fetch = async (url, init) => { writeFileSync('sent.json', JSON.stringify({ url, init })); return { ok: true, json: async () => ({}) }; };\n";
    fs.writeFileSync(path.join(cwd, "snippet.mjs"), standIn + snippets.javascript);
    const r = run(cwd, process.execPath, ["snippet.mjs"], {}, ["snippet.mjs", "sent.json"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.left).toEqual([]);
    const sent = JSON.parse(fs.readFileSync(path.join(cwd, "sent.json"), "utf8"));
    expect(JSON.parse(sent.init.body)).toEqual(expectedBody);
    expect(sent.init.headers.Authorization).toBe("Bearer k-test");
  });

  // The issue's own exploit, one name per language, so a break-out shows as the file it creates, not only as a
  // syntax error among the other payloads.
  it.each([
    ["curl", "radius\ntouch PWNED #", "snippet.sh", "bash", "PWNED"],
    ["python", "radius\nopen('PWNED', 'w') #", "snippet.py", "python3", "PWNED"],
    [
      "javascript",
      "radius\u2028await import('node:fs').then((f) => f.writeFileSync('PWNED', '')) //",
      "snippet.mjs",
      process.execPath,
      "PWNED",
    ],
  ] as const)("%s: the header %j creates no file when the snippet runs", (lang, name, file, program, marker) => {
    const cwd = sandbox();
    const one = predictSnippets(
      "http://127.0.0.1:9",
      5,
      { kind: "tabular", inputs: { data_cols: [name] } } as unknown as Pick<Model, "kind" | "inputs">,
      [1],
    );
    fs.mkdirSync(path.join(cwd, "bin"));
    fs.writeFileSync(path.join(cwd, "bin/curl"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    fs.writeFileSync(
      path.join(cwd, "requests.py"),
      "class _R:\n    def raise_for_status(self): pass\n    def json(self): return {}\ndef post(*a, **k): return _R()\n",
    );
    const standIn = "globalThis.fetch = async () => ({ ok: true, json: async () => ({}) });\n";
    fs.writeFileSync(path.join(cwd, file), (lang === "javascript" ? standIn : "") + one[lang]);
    run(cwd, program, [file], { PATH: `${path.join(cwd, "bin")}:${process.env.PATH}`, PYTHONPATH: cwd, PYTHONDONTWRITEBYTECODE: "1" }, []);
    expect(fs.existsSync(path.join(cwd, marker))).toBe(false);
  });

  it("a harmless name is shown as it is; anything else quoted and escaped", () => {
    expect(commentSafeName("age at entry")).toBe("age at entry");
    expect(commentSafeName("radius\ntouch PWNED #")).toBe('"radius\\ntouch PWNED #"');
    expect(commentSafeName("x\u2028y")).toBe('"x\\u2028y"');
    expect(commentSafeName("a, b")).toBe('"a, b"');
  });
});
