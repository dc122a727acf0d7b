import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * DICOM test files written by test/helpers/make_dicoms.py (every transfer syntax its encoders write, MONOCHROME1/2,
 * bit depths, signed, colour, multi-frame, a PHI header, a corrupt and an unsupported file) and the pipeline's own
 * rendering of them (dicom_reference.py). Built once per content of the scripts and the pipeline code they call,
 * in the system's temp folder, as the serving fixtures are.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = path.join(ROOT, "pipelines/.venv/bin/python");
const INPUTS = [
  "test/helpers/make_dicoms.py",
  "test/helpers/dicom_reference.py",
  "pipelines/builder_pipelines/common/dicom.py",
  "pipelines/builder_pipelines/vision/preprocess.py",
  "pipelines/contract/dicom-window-presets.json",
];

export const haveDicomPython = fs.existsSync(PYTHON) && fs.existsSync(path.join(ROOT, INPUTS[0]));

export interface FixtureFile {
  file: string;
  transfer_syntax: string;
  transfer_syntax_name: string;
  photometric: string;
  bits_stored: number;
  signed: boolean;
  frames: number;
  phi: boolean;
  expect: "ok" | "error";
}
export interface ReferenceEntry {
  file: string;
  rendering: string;
  record: any;
  shape: number[];
  specs: Record<string, { width: number; height: number; channels: 1 | 3 }>;
}

export interface DicomFixtures {
  dir: string;
  files: FixtureFile[];
  reference: ReferenceEntry[];
  bytes(file: string): Buffer;
  rendered(e: ReferenceEntry): Buffer;
  resized(e: ReferenceEntry, spec: string): Buffer;
}

let cached: DicomFixtures | undefined;

export function dicomFixtures(): DicomFixtures {
  if (cached) return cached;
  const hash = createHash("sha256");
  for (const f of INPUTS) if (fs.existsSync(path.join(ROOT, f))) hash.update(fs.readFileSync(path.join(ROOT, f)));
  const dir = path.join(os.tmpdir(), `builder-dicom-fixtures-${hash.digest("hex").slice(0, 16)}`);
  if (!fs.existsSync(path.join(dir, "reference", "index.json"))) {
    const tmp = `${dir}.${process.pid}.partial`;
    fs.rmSync(tmp, { recursive: true, force: true });
    const run = (script: string, args: string[]) =>
      execFileSync(PYTHON, [path.join(ROOT, script), ...args], {
        stdio: ["ignore", "ignore", "inherit"],
        env: { ...process.env, OMP_NUM_THREADS: "1" },
      });
    run("test/helpers/make_dicoms.py", [path.join(tmp, "files"), "--phi"]);
    run("test/helpers/dicom_reference.py", [path.join(tmp, "files"), path.join(tmp, "reference")]);
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another worker won the race
    }
  }
  const files = (JSON.parse(fs.readFileSync(path.join(dir, "files", "manifest.json"), "utf8")) as { files: FixtureFile[] }).files;
  const reference = JSON.parse(fs.readFileSync(path.join(dir, "reference", "index.json"), "utf8")) as ReferenceEntry[];
  cached = {
    dir,
    files,
    reference,
    bytes: (file) => fs.readFileSync(path.join(dir, "files", file)),
    rendered: (e) => fs.readFileSync(path.join(dir, "reference", `${e.file}__${e.rendering}.render.u8`)),
    resized: (e, spec) => fs.readFileSync(path.join(dir, "reference", `${e.file}__${e.rendering}__${spec}.u8`)),
  };
  return cached;
}
