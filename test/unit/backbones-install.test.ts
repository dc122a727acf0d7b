import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chosenBackbone, installBackbone, installFolder, listBackbones, removeBackbone } from "../../src/backbones/store.js";
import { parseConfig } from "../../src/config.js";
import { contractErrors } from "../../src/contract/validate.js";
import { experimentRequestSchema, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import { defaultPython, PIPELINES_DIR } from "../../src/jobs/pipeline-process.js";
import { buildSpec } from "../../src/jobs/spec.js";

// Issue 52: pretrained backbones installed once by an administrator, pinned by SHA-256. No weights can be downloaded
// on these machines: the checkpoint is a tiny CamNet this test builds with the pipelines' own torch, and the "model
// hub" is a local HTTP server (a fake of the remote service, the only fake here).

const ROOT = path.resolve(import.meta.dirname, "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "backbones-"));
const weights = path.join(tmp, "tiny.pt");
let sha = "";
const entry = () => ({
  name: "tiny-camnet",
  sha256: sha,
  licence: "CC0-1.0 (built by this test)",
  source: "test",
  family: "resnet" as const,
  width: 8,
  depth: 1,
  native_side: 28,
});
let hub: http.Server;
let hubUrl = "";

beforeAll(async () => {
  const script =
    "import sys, torch\nfrom builder_pipelines.vision.models import CamNet\ntorch.manual_seed(0)\n" +
    "torch.save(CamNet('resnet', 1, 3, 28, 8, 1).state_dict(), sys.argv[1])";
  execFileSync(defaultPython(process.env.PYTHON_BIN), ["-c", script, weights], {
    cwd: PIPELINES_DIR,
    env: { ...process.env, PYTHONPATH: PIPELINES_DIR },
  });
  sha = createHash("sha256").update(fs.readFileSync(weights)).digest("hex");
  hub = http.createServer((req, res) => {
    if (req.url === "/tiny.pt") fs.createReadStream(weights).pipe(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => hub.listen(0, "127.0.0.1", resolve));
  hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
}, 120_000);

afterAll(() => {
  hub?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("backbones install", () => {
  it("refuses a file whose SHA-256 is not the pinned one, in plain words, and installs nothing", async () => {
    const dir = path.join(tmp, "refused");
    const wrong = "0".repeat(64);
    await expect(installBackbone(dir, weights, { ...entry(), sha256: wrong })).rejects.toThrow(
      `tiny-camnet not installed: the file's SHA-256 is ${sha}, but it was pinned to ${wrong}`,
    );
    expect(await listBackbones(dir)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]); // no half-copied file left behind
    expect(await chosenBackbone(dir)).toBeNull();
  });

  it("the CLI says why and exits 2 on a mismatch", () => {
    const data = path.join(tmp, "cli-data");
    const args = ["backbones", "install", weights, "--sha256", "f".repeat(64), "--name", "x", "--licence", "MIT", "--native-side", "28"];
    const out = spawnSync(path.join(ROOT, "builder"), args, { env: { ...process.env, BUILDER_DATA_DIR: data }, encoding: "utf8" });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(`the file's SHA-256 is ${sha}, but it was pinned to ${"f".repeat(64)}`);
    expect(out.stderr).toContain("no se cambió nada");
    const missing = spawnSync(path.join(ROOT, "builder"), ["backbones", "install", weights, "--name", "x"], {
      env: { ...process.env, BUILDER_DATA_DIR: data },
      encoding: "utf8",
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--sha256: .*--licence: .*--native-side: /);
  }, 60_000);

  it("installs from a file and from a URL, pinned, and the newest one goes into an image job's spec", async () => {
    const dir = path.join(tmp, "ok");
    const fromFile = await installBackbone(dir, weights, entry());
    expect(fromFile.file).toBe(`${sha}.pt`);
    const fromUrl = await installBackbone(dir, `${hubUrl}/tiny.pt`, { ...entry(), name: "tiny-from-hub", source: `${hubUrl}/tiny.pt` });
    expect((await listBackbones(dir)).map((b) => b.name)).toEqual(["tiny-camnet", "tiny-from-hub"]);
    await expect(installBackbone(dir, `${hubUrl}/missing.pt`, entry())).rejects.toThrow("HTTP 404");
    const chosen = (await chosenBackbone(dir))!;
    expect(chosen.spec).toMatchObject({ name: "tiny-from-hub", sha256: sha, licence: "CC0-1.0 (built by this test)", native_side: 28 });
    expect(chosen.file).toBe(path.join(dir, fromUrl.file));

    const config = parseConfig({ BUILDER_DATA_DIR: tmp });
    const spec = (kind: "vision" | "data") =>
      buildSpec(
        config,
        { id: "00000000-0000-0000-0000-000000000001" },
        studyOf(
          withoutToken(
            experimentRequestSchema.parse({
              zip_gcloud: "u/d/data.zip",
              label_cols: ["label"],
              model_type: 0,
              optimization_type: 0,
              experiment_id: 7,
              user_id: "u",
              study_type: "builder",
              optimization_metric: "AUC",
              task: kind,
              ...(kind === "vision" ? { images_col: "image", type_of_experiment: "classification" } : { data_cols: ["a"] }),
            }),
          ),
          config,
        ),
        {
          report: { valid: true, errors: [], warnings: [], errors_omitted: 0, warnings_omitted: 0, summary: {} },
          sha256: "ab".repeat(32),
          root: "/r",
          table: "/r/t.csv",
          idCol: "id",
          imagesCol: kind === "vision" ? "image" : null,
          labelCols: ["label"],
          dataCols: kind === "vision" ? [] : ["a"],
          classNameCol: null,
          problem: "binary",
          split: { seed: 42, train: ["1"], val: ["2"], test: ["3"] },
        },
        "/out",
        undefined,
        undefined,
        chosen,
      );
    const vision = spec("vision");
    expect(vision.options?.backbone).toEqual(chosen.spec);
    expect(vision.options?.pretrained_weights).toBe(chosen.file);
    expect(contractErrors("job-spec", vision)).toEqual([]);
    expect(spec("data").options?.backbone).toBeUndefined(); // tables have no backbone

    expect(await removeBackbone(dir, "tiny-from-hub")).toBe(true);
    expect((await chosenBackbone(dir))!.spec.name).toBe("tiny-camnet");
    expect(fs.existsSync(path.join(dir, fromFile.file))).toBe(true); // still used by the other entry
  });

  it("installs a folder copied onto a host without internet, each file against the pin in its backbones.json", async () => {
    const folder = path.join(tmp, "usb");
    fs.mkdirSync(folder);
    fs.copyFileSync(weights, path.join(folder, "tiny.pt"));
    const { name: _n, ...rest } = entry();
    fs.writeFileSync(path.join(folder, "backbones.json"), JSON.stringify([{ file: "tiny.pt", name: "tiny-offline", ...rest }]));
    const dir = path.join(tmp, "offline");
    expect((await installFolder(dir, folder)).map((b) => b.name)).toEqual(["tiny-offline"]);
    fs.writeFileSync(
      path.join(folder, "backbones.json"),
      JSON.stringify([{ file: "tiny.pt", name: "bad", ...rest, sha256: "1".repeat(64) }]),
    );
    await expect(installFolder(dir, folder)).rejects.toThrow("bad not installed");
    fs.writeFileSync(path.join(folder, "backbones.json"), JSON.stringify([{ file: "tiny.pt", name: "no-licence", ...rest, licence: "" }]));
    await expect(installFolder(dir, folder)).rejects.toThrow(/entry 0\.licence: say the weights' licence/);
    expect((await listBackbones(dir)).map((b) => b.name)).toEqual(["tiny-offline"]);
  });
});
