import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { fromIni } from "@aws-sdk/credential-provider-ini";
import type { Config } from "../config.js";

type S3Settings = Pick<
  Config,
  | "S3_BUCKET"
  | "S3_ENDPOINT"
  | "S3_REGION"
  | "S3_FORCE_PATH_STYLE"
  | "S3_CREDENTIALS_FILE"
  | "S3_PROFILE"
  | "AWS_ACCESS_KEY_ID"
  | "AWS_SECRET_ACCESS_KEY"
  | "AWS_SESSION_TOKEN"
>;

/** Where the credentials come from, for messages (never the credentials themselves). */
export function credentialSource(c: S3Settings): string {
  if (c.AWS_ACCESS_KEY_ID) return "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
  if (c.S3_CREDENTIALS_FILE) return `profile [${c.S3_PROFILE}] of S3_CREDENTIALS_FILE (${c.S3_CREDENTIALS_FILE})`;
  return "the AWS SDK's default chain (~/.aws/credentials, AWS_PROFILE, an instance or pod role)";
}

/**
 * The S3 client for the configured store. Path-style addressing by default when S3_ENDPOINT names a store of
 * one's own (MinIO, Ceph RGW and StorageGRID resolve buckets from the path, not from a bucket.host name); the
 * credentials are the two variables, else the shared credentials file S3_CREDENTIALS_FILE, else the SDK's chain.
 * The SDK's integrity checksums (CRC32 on every upload) stay at its default; an older store that refuses them is
 * served with AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED, which the SDK reads itself (docs/configuration.md).
 */
export function createS3Client(c: S3Settings): S3Client {
  const credentials = c.AWS_ACCESS_KEY_ID
    ? { accessKeyId: c.AWS_ACCESS_KEY_ID, secretAccessKey: c.AWS_SECRET_ACCESS_KEY!, sessionToken: c.AWS_SESSION_TOKEN }
    : c.S3_CREDENTIALS_FILE
      ? fromIni({ filepath: c.S3_CREDENTIALS_FILE, profile: c.S3_PROFILE })
      : undefined;
  return new S3Client({
    region: c.S3_REGION,
    endpoint: c.S3_ENDPOINT,
    forcePathStyle: c.S3_FORCE_PATH_STYLE ?? c.S3_ENDPOINT !== undefined,
    credentials,
    // The SDK retries throttling and 5xx answers (3 attempts by default). A store that does not answer fails the
    // request instead of holding it for ever: no connection in 10 s, or no answer 2 minutes after the request
    // began (time enough to send a 16 MiB part at 1 Mbit/s). No socket inactivity limit: a download read slowly
    // by its client (a batch's overlays.zip) pauses its socket without being broken.
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000, throwOnRequestTimeout: true },
  });
}

export class StorageUnavailableError extends Error {}

/**
 * Asks the store for the bucket once at start-up (HeadBucket), so that a wrong endpoint, bucket, region or
 * credential stops Builder with one sentence saying which, instead of failing the first upload.
 */
export async function checkS3Bucket(client: S3Client, c: S3Settings): Promise<void> {
  const where = `S3 bucket ${c.S3_BUCKET} at ${c.S3_ENDPOINT ?? `Amazon S3 (${c.S3_REGION})`}`;
  try {
    await client.send(new HeadBucketCommand({ Bucket: c.S3_BUCKET! }));
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    let why: string;
    if (e.name === "CredentialsProviderError")
      why = `no credentials were found (${e.message}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or S3_CREDENTIALS_FILE`;
    else if (status === 404 || e.name === "NotFound" || e.name === "NoSuchBucket")
      why = "the bucket does not exist there: create it first (Builder does not create buckets)";
    else if (status === 403) why = `access was refused to the credentials from ${credentialSource(c)}: check them and the bucket's policy`;
    else if (status === 301 || status === 400)
      why = `the store answered HTTP ${status}: the bucket may be in another region than S3_REGION=${c.S3_REGION}`;
    else if (status) why = `the store answered HTTP ${status} (${e.name ?? "error"})`;
    else why = `the store did not answer (${e.code ?? e.name ?? "error"}: ${e.message ?? ""})`;
    throw new StorageUnavailableError(`cannot use the ${where}: ${why}`);
  }
}
