import fs from "node:fs";
import path from "node:path";
import type { Manifest } from "../contract/types.js";
import type { ExperimentRow, ModelRow } from "../experiments/repository.js";
import type { JobDeps } from "./deps.js";

async function filesUnder(dir: string): Promise<string[]> {
  return (await fs.promises.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/**
 * Copies out_dir to models/<user>/<experiment_id>/v<N>/ (manifest.json last), and only then inserts the models
 * row. Serving finds models through the rows, so a half-copied version is never visible; a crash mid-copy leaves
 * an orphan folder that the re-run overwrites (the version number is only taken by the row).
 */
export async function publishModel(
  deps: JobDeps,
  row: ExperimentRow,
  manifest: Manifest,
  outDir: string,
  owner: string,
  storagePrefix: string,
): Promise<ModelRow> {
  checkPublishable(manifest);
  const version = await deps.repo.nextModelVersion(row.id);
  // Under the workspace's prefix: a personal workspace's is its owner's id, so its layout is the seed's.
  const storePath = `models/${storagePrefix}/${row.experimentId}/v${version}`;
  const files = (await filesUnder(outDir)).sort((a, b) => Number(a === "manifest.json") - Number(b === "manifest.json"));
  for (const rel of files) await deps.bucket.uploadFile(path.join(outDir, rel), `${storePath}/${rel.split(path.sep).join("/")}`);
  // The lease is still ours: a runner that lost it must not publish (the new holder will).
  const still = await deps.repo.renewLease(row.id, owner, deps.config.JOB_LEASE_S);
  if (!still) throw Object.assign(new Error("lease lost before the models row was written"), { leaseLost: true });
  return deps.repo.insertModel({
    userId: row.userId,
    workspaceId: row.workspaceId,
    experimentUuid: row.id,
    experimentId: row.experimentId,
    version,
    kind: manifest.kind,
    storePath,
    manifest,
  });
}

/**
 * What serving promises for every published model of a kind. A vision classifier answers Grad-CAM maps for
 * each positive class (the seed's `gradients`), so one without a CAM output is not published: the experiment
 * fails with this message instead of serving `gradients: {}` without a word.
 */
export function checkPublishable(manifest: { kind?: string; outputs?: { cam?: string } }): void {
  if (manifest.kind === "vision_classification" && !manifest.outputs?.cam) {
    throw new Error(
      "the vision model has no Grad-CAM output (manifest outputs.cam), so predictions could not carry gradients; it was not published",
    );
  }
}
