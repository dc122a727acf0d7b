import { Readable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments, files } from "../../src/db/schema.js";
import { createUserWithKey, type UserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { fixtureRequest } from "../fixtures/serving/publish.js";
import { objectUri } from "../../src/storage/bucket.js";
import { storedFiles, TEST_STORAGE } from "../helpers/storage.js";
import { api, tabularZip } from "./experiments-fixtures.js";

// DELETE of an uploaded file and of a whole folder: refused with 409 while an unfinished experiment reads it,
// unless force=true, which cancels that experiment first. The "running" experiment here holds a live lease of a
// runner elsewhere (so this server's runner leaves it alone) and sees the cancel through the flag. In the storage
// suite: with the bucket in the data folder, and in S3, where the experiment names its dataset with an s3:// link.

describe(`DELETE /v1/files: one file, a folder, and a dataset in use (${TEST_STORAGE})`, () => {
  let server: TestServer;
  let alice: UserWithKey;
  let bob: UserWithKey;
  const zip = tabularZip().zip;

  const upload = (u: UserWithKey, objectPath: string) => server.services.datasets.upload(u.scope, objectPath, Readable.from(zip));
  /** An experiment of `u` reading zipPath, running on a runner elsewhere (a lease live for an hour). */
  const runningOn = async (u: UserWithKey, experimentId: number, zipPath: string, name?: string) => {
    const request = { ...fixtureRequest(u.userId, experimentId), zip_gcloud: zipPath };
    const [row] = await server.services.db
      .insert(experiments)
      .values({
        userId: u.userId,
        workspaceId: await personalWorkspaceId(server.services.db, u.userId),
        experimentId,
        request,
        name,
        requestHash: `h${experimentId}`,
        status: "training",
        leaseOwner: "elsewhere",
        leaseExpiresAt: new Date(Date.now() + 3600_000),
      })
      .returning();
    return row;
  };

  /** The data folder's files and the bucket's objects (as bucket/<path>), wherever the bucket is. */
  const stored = () => storedFiles(server.dataDir, server.services.bucket);

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    alice = await createUserWithKey(server);
    bob = await createUserWithKey(server);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("a file in use is refused with 409 naming the experiment; force=true cancels it and deletes the file", async () => {
    const p = `${alice.userId}/study/data.zip`;
    await upload(alice, p);
    const row = await runningOn(alice, 1, objectUri(server.services.bucket, p), "Breast cancer");
    const client = api(server.url, alice.key);
    const refused = await client.del(`/v1/files/${p}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("dataset_in_use");
    expect(refused.body.error.message).toContain('experiment 1 ("Breast cancer"), training');
    expect(refused.body.error.message).toContain("force=true");
    expect(await stored()).toContain(`bucket/${p}`);

    expect((await client.del(`/v1/files/${p}?force=maybe`)).status).toBe(400);
    expect((await client.del(`/v1/files/${p}?force=true`)).status).toBe(204);
    expect((await stored()).filter((f) => f.includes("/study/"))).toEqual([]);
    expect(await server.services.db.select().from(files).where(eq(files.path, p))).toEqual([]);
    const [after] = await server.services.db.select().from(experiments).where(eq(experiments.id, row.id));
    expect(after.cancelRequested).toBe(true);
    expect((await client.del(`/v1/files/${p}`)).status).toBe(404);
  });

  it("a folder goes whole, with its rows; another user's folder is 404 and untouched; a finished experiment does not block", async () => {
    const mine = [`${alice.userId}/cohort/a.zip`, `${alice.userId}/cohort/b.zip`];
    for (const p of mine) await upload(alice, p);
    await upload(alice, `${alice.userId}/other/c.zip`);
    await upload(bob, `${bob.userId}/cohort/a.zip`);
    await server.services.db.insert(experiments).values({
      userId: alice.userId,
      workspaceId: await personalWorkspaceId(server.services.db, alice.userId),
      experimentId: 2,
      request: { ...fixtureRequest(alice.userId, 2), zip_gcloud: mine[0] },
      requestHash: "h2",
      status: "ready",
    });
    const client = api(server.url, alice.key);

    expect((await api(server.url, bob.key).del(`/v1/files/${alice.userId}/cohort`)).status).toBe(404);
    await runningOn(alice, 3, mine[1]);
    const refused = await client.del(`/v1/files/${alice.userId}/cohort`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/^the folder .*cohort is in use by experiment 3, training/);

    const res = await client.del(`/v1/files/${alice.userId}/cohort?force=true`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: mine, cancelled_experiments: [3] });
    const tree = await stored();
    expect(tree.filter((f) => f.startsWith(`bucket/${alice.userId}/cohort`))).toEqual([]);
    expect(tree).toEqual(expect.arrayContaining([`bucket/${alice.userId}/other/c.zip`, `bucket/${bob.userId}/cohort/a.zip`]));
    const listed = (await client.get("/v1/files")).body.files.map((f: { zip_gcloud: string }) => f.zip_gcloud);
    expect(listed).toEqual([`${alice.userId}/other/c.zip`]);
    expect((await client.del(`/v1/files/${alice.userId}/cohort`)).status).toBe(404);
    expect((await client.del(`/v1/files/${alice.userId}/bad%20name`)).status).toBe(400);
  });
});
