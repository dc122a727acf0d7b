import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Where the Python side lives and which interpreter runs it: the jobs (training, evaluation) and the dataset
// service (sample tables) both start Python, so this sits above both.

export const PIPELINES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../pipelines");

/** PYTHON_BIN when set, else the pipelines' own virtual environment (made by `make install`), else python3. */
export function defaultPython(configured?: string): string {
  if (configured) return configured;
  const venv = path.join(PIPELINES_DIR, ".venv/bin/python");
  return fs.existsSync(venv) ? venv : "python3";
}
