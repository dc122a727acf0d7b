import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutboundGuard } from "../../src/net/outbound-guard.js";
import { stow } from "../../src/pacs/stow.js";

// STOW-RS's retries: a busy or failing PACS (503, a dropped connection) is tried again with a doubling wait; a
// refusal (401, a FailedSOPSequence) is not, since the same request would be refused again.
describe("STOW-RS sending", () => {
  let server: http.Server;
  let root: string;
  /** What the server answers, request by request ("drop": close the socket). */
  let script: Array<number | "drop" | "failed-sop"> = [];
  const seen: Array<{ type?: string; auth?: string; url?: string; body: Buffer }> = [];
  const guard = new OutboundGuard({ allowHosts: ["127.0.0.1"], timeoutMs: 5000 });
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);

  beforeAll(async () => {
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      seen.push({ type: req.headers["content-type"], auth: req.headers.authorization, url: req.url, body: Buffer.concat(chunks) });
      const next = script.shift() ?? 200;
      if (next === "drop") return void req.socket.destroy();
      if (next === "failed-sop")
        return void res.writeHead(200, { "content-type": "application/dicom+json" }).end('{"00081198":{"vr":"SQ","Value":[{}]}}');
      res.writeHead(next, { "content-type": "application/dicom+json" }).end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dicom-web`;
  });
  afterAll(async () => {
    await guard.close();
    await new Promise((r) => server.close(r));
  });
  const send = () =>
    stow(guard, { root, authorization: "Basic eDp5", caption: null, secondaryCapture: false }, "1.2.3", Buffer.from("DICM"), {
      attempts: 4,
      baseMs: 100,
      sleep,
    });

  it("posts one multipart/related application/dicom part to /studies/{study} with the credentials", async () => {
    [script, seen.length, waits.length] = [[200], 0, 0];
    expect(await send()).toEqual({ ok: true, status: 200, attempts: 1 });
    expect(seen[0].url).toBe("/dicom-web/studies/1.2.3");
    expect(seen[0].auth).toBe("Basic eDp5");
    const boundary = /boundary=(\S+)/.exec(seen[0].type!)![1];
    expect(seen[0].type).toMatch(/^multipart\/related; type="application\/dicom"; boundary=/);
    expect(seen[0].body.toString()).toBe(`--${boundary}\r\nContent-Type: application/dicom\r\n\r\nDICM\r\n--${boundary}--\r\n`);
  });

  it("retries 503 and a dropped connection with a doubling wait, then succeeds", async () => {
    [script, seen.length, waits.length] = [[503, "drop", 200], 0, 0];
    expect(await send()).toEqual({ ok: true, status: 200, attempts: 3 });
    expect(waits).toEqual([100, 200]);
  });

  it("gives up after the last attempt, saying why", async () => {
    [script, seen.length, waits.length] = [[503, 503, 503, 503], 0, 0];
    expect(await send()).toMatchObject({ ok: false, status: 503, attempts: 4, reason: "the PACS answered HTTP 503" });
    expect(waits).toEqual([100, 200, 400]);
  });

  it("does not retry a refusal: refused credentials, or the object listed as failed", async () => {
    [script, seen.length] = [[401], 0];
    expect(await send()).toMatchObject({ ok: false, status: 401, attempts: 1, reason: "the PACS refused the credentials (HTTP 401)" });
    [script, seen.length] = [["failed-sop"], 0];
    expect(await send()).toMatchObject({ ok: false, status: 200, attempts: 1, reason: "the PACS refused the object (HTTP 200)" });
    expect(seen).toHaveLength(1);
  });
});
