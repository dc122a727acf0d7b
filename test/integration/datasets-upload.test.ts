import { createHash } from "node:crypto";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget, primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { readObject, storedFiles, TEST_STORAGE, unfinishedUploads } from "../helpers/storage.js";

// Uploads through HTTP: raw PUT and multipart POST, the size limit, other users' folders, bad paths. In the storage
// suite: on the local folder, and on S3 (TEST_STORAGE=s3, test/helpers/storage.ts).

/** What the bucket holds (temp files of the local folder included), and the multipart uploads S3 holds unfinished. */
async function bucketState(server: TestServer, under = "") {
  const files = (await storedFiles(server.dataDir, server.services.bucket)).filter((f) => f.startsWith(`bucket/${under}`));
  return { files, unfinished: await unfinishedUploads(server.services.bucket) };
}

const json = async (res: Response): Promise<any> => res.json();
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** n bytes that start with a zip's local-file-header signature (the upload checks only the signature). */
const zipLike = (n: number, fill: number) => Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), Buffer.alloc(n - 4, fill)]);

describeEachTarget("file uploads (%s)", (target) => {
  let server: TestServer;
  let user: UserWithKey;
  const LIMIT = 200_000;

  beforeAll(async () => {
    server = await startTestServer(target, { MAX_UPLOAD_BYTES: String(LIMIT) });
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it("PUT streams the body to the bucket and answers 201 with size and sha256", async () => {
    const body = zipLike(150_000, 3);
    const res = await fetch(`${server.url}/v1/files/${user.userId}/exp1/data.zip`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body,
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ zip_gcloud: `${user.userId}/exp1/data.zip`, size: body.length, sha256: sha(body) });
    const stored = await readObject(server.services.bucket, `${user.userId}/exp1/data.zip`);
    expect(sha(stored)).toBe(sha(body));
    const list = await json(await fetch(`${server.url}/v1/files`, { headers: bearer(user.key) }));
    expect(list.files).toEqual([
      expect.objectContaining({ zip_gcloud: `${user.userId}/exp1/data.zip`, size: body.length, sha256: sha(body) }),
    ]);
  });

  it("POST multipart stores the file under the caller's folder", async () => {
    const body = Buffer.from("PK\x03\x04 fake zip bytes", "latin1");
    const form = new FormData();
    form.append("path", "exp2/upload.zip");
    form.append("file", new Blob([body]), "upload.zip");
    const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ zip_gcloud: `${user.userId}/exp2/upload.zip`, size: body.length, sha256: sha(body) });
  });

  it("refuses a body over the limit with 413 and leaves nothing behind (declared and streamed)", async () => {
    const before = await bucketState(server);
    const big = zipLike(LIMIT + 1, 1);
    const declared = await fetch(`${server.url}/v1/files/${user.userId}/exp3/big.zip`, {
      method: "PUT",
      headers: bearer(user.key),
      body: big,
    });
    expect(declared.status).toBe(413);
    expect((await json(declared)).error.code).toBe("payload_too_large");
    // Chunked, no Content-Length: the limit stops the stream itself.
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(zipLike(10_000, 0)));
        for (let i = 1; i < 30; i++) c.enqueue(new Uint8Array(10_000));
        c.close();
      },
    });
    const streamed = await fetch(`${server.url}/v1/files/${user.userId}/exp3/big.zip`, {
      method: "PUT",
      headers: bearer(user.key),
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const form = new FormData();
    form.append("path", "exp3/big.zip");
    form.append("file", new Blob([big]), "big.zip");
    const multi = await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form });
    expect(multi.status).toBe(413);
    expect(await bucketState(server)).toEqual(before);
  });

  it("leaves nothing behind when the client goes away mid-upload", async () => {
    const url = new URL(`${server.url}/v1/files/${user.userId}/exp4/cut.zip`);
    const req = http.request(url, { method: "PUT", headers: bearer(user.key, { "content-length": "150000" }) });
    req.on("error", () => undefined);
    req.write(zipLike(60_000, 5));
    await new Promise((r) => setTimeout(r, 300));
    req.destroy();
    const empty = { files: [], unfinished: [] };
    let state = await bucketState(server, `${user.userId}/exp4/`);
    for (let i = 0; i < 50 && (state.files.length || state.unfinished.length); i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await bucketState(server, `${user.userId}/exp4/`);
    }
    expect(state).toEqual(empty);
  });

  it("hides other users' folders (404) and refuses bad paths (400)", async () => {
    const other = await createUserWithKey(server);
    const put = (p: string) => fetch(`${server.url}/v1/files/${p}`, { method: "PUT", headers: bearer(user.key), body: "x" });
    expect((await put(`${other.userId}/exp/data.zip`)).status).toBe(404);
    expect((await put(`${user.userId}/exp/data.txt`)).status).toBe(400);
    expect((await put(`${user.userId}/exp/da%20ta.zip`)).status).toBe(400);
    expect((await put(`${user.userId}/..%2Fx/data.zip`)).status).toBe(400);
    const form = new FormData();
    form.append("path", `${other.userId}/exp/data.zip`);
    form.append("file", new Blob(["x"]), "data.zip");
    expect((await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form })).status).toBe(404);
    const noKey = await fetch(`${server.url}/v1/files/${user.userId}/exp/data.zip`, { method: "PUT", body: "x" });
    expect(noKey.status).toBe(401);
  });

  it("multipart without the path field first is a 400 that says so", async () => {
    const form = new FormData();
    form.append("file", new Blob(["x"]), "data.zip");
    const res = await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain("path");
  });
});

// Issue 16/19: any bytes used to be stored as .zip with 201. The signature is checked on the first bytes.
describe("uploads that are not zips", () => {
  let server: TestServer;
  let user: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it.each([
    ["a CSV", Buffer.from("id,label\n1,a\n")],
    ["a PNG", Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")],
    ["three bytes", Buffer.from("PK\x03", "latin1")],
    ["an empty body", Buffer.alloc(0)],
  ])("refuses %s with 415 not_a_zip (PUT and multipart) and stores nothing", async (_name, body) => {
    const put = await fetch(`${server.url}/v1/files/${user.userId}/nz/data.zip`, { method: "PUT", headers: bearer(user.key), body });
    expect(put.status).toBe(415);
    expect((await json(put)).error.code).toBe("not_a_zip");
    const form = new FormData();
    form.append("path", "nz/form.zip");
    form.append("file", new Blob([body]), "form.zip");
    const multi = await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form });
    expect(multi.status).toBe(415);
    expect((await json(multi)).error.code).toBe("not_a_zip");
    expect(await bucketState(server, `${user.userId}/nz/`)).toEqual({ files: [], unfinished: [] });
    expect((await json(await fetch(`${server.url}/v1/files`, { headers: bearer(user.key) }))).files).toEqual([]);
  });

  it("refuses a large non-zip body at once, without reading it all", async () => {
    // 50 MB declared, only the first 64 kB sent: the answer comes before the rest would have been needed.
    const url = new URL(`${server.url}/v1/files/${user.userId}/nz/big.zip`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(url, { method: "PUT", headers: bearer(user.key, { "content-length": String(50 * 1024 * 1024) }) }, (res) =>
        resolve(res.statusCode ?? 0),
      );
      req.on("error", reject);
      req.write(Buffer.alloc(64 * 1024, 0x41));
    });
    expect(status).toBe(415);
  });
});

// A dataset of a few GB streams through the server to the bucket: on S3, as a multipart upload (16 MiB parts).
describe(`a large zip (${TEST_STORAGE})`, () => {
  let server: TestServer;
  let user: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it("PUT of 40 MiB, sent in chunks, is stored whole with its sha256; a cut one leaves nothing", async () => {
    const MiB = 1024 * 1024;
    const hash = createHash("sha256");
    const chunk = (i: number) => {
      const c = i === 0 ? zipLike(MiB, 0) : Buffer.alloc(MiB, i);
      hash.update(c);
      return new Uint8Array(c);
    };
    let i = 0;
    const body = new ReadableStream({
      pull(c) {
        if (i < 40) c.enqueue(chunk(i++));
        else c.close();
      },
    });
    const res = await fetch(`${server.url}/v1/files/${user.userId}/big/scans.zip`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(201);
    const digest = hash.digest("hex");
    expect(await json(res)).toEqual({ zip_gcloud: `${user.userId}/big/scans.zip`, size: 40 * MiB, sha256: digest });
    expect(sha(await readObject(server.services.bucket, `${user.userId}/big/scans.zip`))).toBe(digest);

    // 30 MiB of a declared 40 MiB, then the client goes: past the first part on S3, so an upload was begun.
    const url = new URL(`${server.url}/v1/files/${user.userId}/big/cut.zip`);
    const req = http.request(url, { method: "PUT", headers: bearer(user.key, { "content-length": String(40 * MiB) }) });
    req.on("error", () => undefined);
    for (let j = 0; j < 30; j++)
      if (!req.write(j === 0 ? zipLike(MiB, 0) : Buffer.alloc(MiB, j))) await new Promise((r) => req.once("drain", r));
    await new Promise((r) => setTimeout(r, 300));
    req.destroy();
    let state = await bucketState(server, `${user.userId}/big/`);
    for (let k = 0; k < 100 && (state.files.length !== 1 || state.unfinished.length); k++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await bucketState(server, `${user.userId}/big/`);
    }
    expect(state).toEqual({ files: [`bucket/${user.userId}/big/scans.zip`], unfinished: [] });
  });
});
