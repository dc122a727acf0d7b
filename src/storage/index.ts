import path from "node:path";
import type { Config } from "../config.js";
import type { Bucket } from "./bucket.js";
import { GcsBucket } from "./gcs-bucket.js";
import { LocalBucket } from "./local-bucket.js";
import { S3Bucket } from "./s3-bucket.js";
import { checkS3Bucket, createS3Client } from "./s3-client.js";

export type { Bucket } from "./bucket.js";

/**
 * Google Cloud Storage when GCS_BUCKET is set, S3 (or an S3-compatible store) when S3_BUCKET is, otherwise the
 * folder BUILDER_DATA_DIR/bucket. An S3 bucket is checked once here: a wrong setting stops start-up, saying which.
 */
export async function createBucket(config: Config): Promise<Bucket> {
  if (config.GCS_BUCKET) return new GcsBucket(config.GCS_BUCKET);
  if (config.S3_BUCKET) {
    const client = createS3Client(config);
    await checkS3Bucket(client, config);
    return new S3Bucket(client, config.S3_BUCKET);
  }
  return new LocalBucket(path.join(config.dataDir, "bucket"));
}
