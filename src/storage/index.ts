import path from "node:path";
import type { Config } from "../config.js";
import type { Bucket } from "./bucket.js";
import { GcsBucket } from "./gcs-bucket.js";
import { LocalBucket } from "./local-bucket.js";

export type { Bucket } from "./bucket.js";

/** Google Cloud Storage when GCS_BUCKET is set, otherwise the folder BUILDER_DATA_DIR/bucket. */
export async function createBucket(config: Config): Promise<Bucket> {
  if (config.GCS_BUCKET) return new GcsBucket(config.GCS_BUCKET);
  return new LocalBucket(path.join(config.dataDir, "bucket"));
}
