import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { predictSnippets, SNIPPET_IMAGE_FILE } from "../../web/src/lib/snippets";

// An image model's Try-it snippets send a local file as a data: URI (issue 38: "the code snippets show sending a
// local image file (base64), not only a web link"). Each one is run for real (bash, python3, node) in a folder
// holding a real PNG, against a stand-in for curl, requests or fetch that records what would be sent.

const URL = "https://builder.hospital.org/v1/experiments/7/predict";
const snippets = predictSnippets("https://builder.hospital.org", 7, { kind: "vision_classification", inputs: {} } as never);
let png: Buffer;
let expected: string;

beforeAll(async () => {
  // 300x300 of noise: about 270 KB, a base64 over the 128 KiB a single command-line argument may hold
  const raw = crypto.randomBytes(300 * 300 * 3); // noise does not compress
  png = await sharp(raw, { raw: { width: 300, height: 300, channels: 3 } })
    .png()
    .toBuffer();
  expect(Math.ceil(png.length / 3) * 4).toBeGreaterThan(128 * 1024);
  expected = `data:image/png;base64,${png.toString("base64")}`;
});

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
function folderWithScan(): string {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "snippet-image-"));
  fs.writeFileSync(path.join(dir, SNIPPET_IMAGE_FILE), png);
  return dir;
}
function run(cwd: string, cmd: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(cmd, args, {
    cwd,
    env: { PATH: process.env.PATH!, HOME: cwd, BUILDER_API_KEY: "k-test", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
}

describe("Try-it snippets of an image model send a local file", () => {
  it("curl: the body comes from stdin (no argument-length limit) and is the file as a data: URI", () => {
    const cwd = folderWithScan();
    fs.writeFileSync(path.join(cwd, "snippet.sh"), snippets.curl);
    fs.mkdirSync(path.join(cwd, "bin"));
    fs.writeFileSync(
      path.join(cwd, "bin/curl"),
      '#!/bin/bash\nprintf "%s\\n" "$@" > "$(dirname "$0")/../args.txt"\ncat > "$(dirname "$0")/../body.json"\n',
      { mode: 0o755 },
    );
    const r = run(cwd, "bash", ["snippet.sh"], { PATH: `${path.join(cwd, "bin")}:${process.env.PATH}` });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const args = fs.readFileSync(path.join(cwd, "args.txt"), "utf8").split("\n");
    expect(args).toContain(URL);
    expect(args).toContain("Authorization: Bearer k-test");
    expect(JSON.parse(fs.readFileSync(path.join(cwd, "body.json"), "utf8"))).toEqual({ message: expected });
  });

  it("Python: reads the file and posts it as a data: URI", () => {
    const cwd = folderWithScan();
    fs.writeFileSync(path.join(cwd, "snippet.py"), snippets.python);
    fs.writeFileSync(
      path.join(cwd, "requests.py"),
      "class _R:\n    def raise_for_status(self): pass\n    def json(self): return {}\n" +
        "def post(url, headers, json, timeout):\n    import json as j\n    open('sent.json', 'w').write(j.dumps({'url': url, 'headers': headers, 'json': json}))\n    return _R()\n",
    );
    const r = run(cwd, "python3", ["snippet.py"], { PYTHONPATH: cwd, PYTHONDONTWRITEBYTECODE: "1" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const sent = JSON.parse(fs.readFileSync(path.join(cwd, "sent.json"), "utf8"));
    expect(sent).toMatchObject({ url: URL, headers: { Authorization: "Bearer k-test" }, json: { message: expected } });
  });

  it("JavaScript (Node): reads the file and posts it as a data: URI", () => {
    const cwd = folderWithScan();
    const standIn =
      "import { writeFileSync } from 'node:fs';\n" +
      "globalThis.fetch = async (url, init) => { writeFileSync('sent.json', JSON.stringify({ url, init })); return { ok: true, json: async () => ({}) }; };\n";
    fs.writeFileSync(path.join(cwd, "snippet.mjs"), standIn + snippets.javascript);
    const r = run(cwd, process.execPath, ["snippet.mjs"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const sent = JSON.parse(fs.readFileSync(path.join(cwd, "sent.json"), "utf8"));
    expect(sent.url).toBe(URL);
    expect(JSON.parse(sent.init.body)).toEqual({ message: expected });
  });
});
