import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { createS3Client } from "../../src/storage/s3-client.js";

// The S3 settings (S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_FORCE_PATH_STYLE, credentials from the environment or a
// file) as the configuration parses them and the S3 client is made from them. No store is asked here: the storage
// suite's S3 run (test/unit/bucket-contract.test.ts and the rest) does that against a stand-in.

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

const MINIO = { S3_BUCKET: "builder-data", S3_ENDPOINT: "https://minio.hospital.example:9000" };
const KEYS = { AWS_ACCESS_KEY_ID: "AKIAEXAMPLE", AWS_SECRET_ACCESS_KEY: "s3cr3t-value-that-must-not-show" };

function credentialsFile(text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "s3-creds-")), "credentials");
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

describe("S3 settings", () => {
  it("a store of one's own (S3_ENDPOINT) is addressed path-style by default; Amazon S3 virtual-hosted", async () => {
    const own = createS3Client(parseConfig({ ...MINIO, ...KEYS }));
    expect(own.config.forcePathStyle).toBe(true);
    expect(await own.config.region()).toBe("us-east-1");
    const endpoint = await own.config.endpoint!();
    expect(`${endpoint.protocol}//${endpoint.hostname}:${endpoint.port}`).toBe("https://minio.hospital.example:9000");
    const amazon = createS3Client(parseConfig({ S3_BUCKET: "builder-data", S3_REGION: "eu-west-1", ...KEYS }));
    expect(amazon.config.forcePathStyle).toBe(false);
    expect(await amazon.config.region()).toBe("eu-west-1");
    const chosen = createS3Client(parseConfig({ ...MINIO, ...KEYS, S3_FORCE_PATH_STYLE: "false" }));
    expect(chosen.config.forcePathStyle).toBe(false);
  });

  it("takes the credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", async () => {
    const client = createS3Client(parseConfig({ ...MINIO, ...KEYS }));
    const creds = await client.config.credentials();
    expect([creds.accessKeyId, creds.secretAccessKey]).toEqual([KEYS.AWS_ACCESS_KEY_ID, KEYS.AWS_SECRET_ACCESS_KEY]);
  });

  it("or from a shared credentials file (S3_CREDENTIALS_FILE, e.g. a Docker secret), profile S3_PROFILE", async () => {
    const file = credentialsFile(
      "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = default-secret\n\n" +
        "[builder]\naws_access_key_id = BUILDERKEY\naws_secret_access_key = builder-secret\n",
    );
    const byDefault = await createS3Client(parseConfig({ ...MINIO, S3_CREDENTIALS_FILE: file })).config.credentials();
    expect(byDefault.accessKeyId).toBe("DEFAULTKEY");
    const named = await createS3Client(parseConfig({ ...MINIO, S3_CREDENTIALS_FILE: file, S3_PROFILE: "builder" })).config.credentials();
    expect([named.accessKeyId, named.secretAccessKey]).toEqual(["BUILDERKEY", "builder-secret"]);
    await expect(
      createS3Client(parseConfig({ ...MINIO, S3_CREDENTIALS_FILE: file, S3_PROFILE: "absent" })).config.credentials(),
    ).rejects.toThrow(/absent/);
  });

  it("refuses what cannot work, every problem at once, naming the variable and never echoing the secret", () => {
    const found = problems({
      GCS_BUCKET: "gcs-bucket",
      S3_BUCKET: "Builder_Data",
      S3_ENDPOINT: "minio:9000",
      AWS_SECRET_ACCESS_KEY: KEYS.AWS_SECRET_ACCESS_KEY,
    });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual(["AWS_ACCESS_KEY_ID", "S3_BUCKET", "S3_BUCKET", "S3_ENDPOINT"]);
    expect(found.join("\n")).toMatch(/S3_BUCKET: an S3 bucket name/);
    expect(found.join("\n")).not.toContain(KEYS.AWS_SECRET_ACCESS_KEY);

    expect(problems({ GCS_BUCKET: "gcs-bucket", S3_BUCKET: "builder-data" })).toEqual([
      expect.stringMatching(/^S3_BUCKET: GCS_BUCKET is set too/),
    ]);
    expect(problems({ S3_ENDPOINT: MINIO.S3_ENDPOINT })).toEqual([expect.stringMatching(/^S3_ENDPOINT: is set but S3_BUCKET is not/)]);
    const halfKey = problems({ ...MINIO, AWS_SECRET_ACCESS_KEY: KEYS.AWS_SECRET_ACCESS_KEY });
    expect(halfKey).toEqual([expect.stringMatching(/^AWS_ACCESS_KEY_ID: AWS_SECRET_ACCESS_KEY is set/)]);
    expect(halfKey.join("\n")).not.toContain(KEYS.AWS_SECRET_ACCESS_KEY);
    expect(problems({ ...MINIO, S3_CREDENTIALS_FILE: "/nonexistent/credentials" })).toEqual([
      expect.stringMatching(/^S3_CREDENTIALS_FILE: a readable file/),
    ]);
    const file = credentialsFile("[default]\naws_access_key_id = A\naws_secret_access_key = B\n");
    expect(problems({ ...MINIO, ...KEYS, S3_CREDENTIALS_FILE: file })).toEqual([
      expect.stringMatching(/^S3_CREDENTIALS_FILE: AWS_ACCESS_KEY_ID is set too/),
    ]);
    // The example's placeholder is refused as for every other secret.
    expect(problems({ ...MINIO, AWS_ACCESS_KEY_ID: "builder", AWS_SECRET_ACCESS_KEY: "change-me-to-a-long-random-string" })).toEqual([
      expect.stringMatching(/^AWS_SECRET_ACCESS_KEY: .*placeholder/),
    ]);
  });

  it("without S3_BUCKET, AWS variables of something else change nothing", () => {
    expect(problems({ AWS_ACCESS_KEY_ID: "AKIAOTHER" })).toEqual([]);
  });
});
