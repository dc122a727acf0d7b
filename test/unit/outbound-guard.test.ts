import http from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAddress, compileAllowList } from "../../src/net/address-policy.js";
import { fetchImageBytes } from "../../src/net/image-fetch.js";
import { OutboundGuard, guardedFetch, type Resolver } from "../../src/net/outbound-guard.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";

// Names under .test never resolve on a real resolver; tests map them to chosen addresses.
const fakeDns: Record<string, string[]> = {
  "evil.test": ["10.0.0.1"],
  "mixed.test": ["8.8.8.8", "127.0.0.1"],
  "v6.test": ["::1"],
  "mapped.test": ["::ffff:169.254.169.254"],
  "compat.test": ["::7f00:1"],
  "img.test": ["127.0.0.1"],
  "other.test": ["127.0.0.1"],
};
let resolverCalls = 0;
const resolve: Resolver = async (host) => {
  resolverCalls++;
  const a = fakeDns[host];
  if (!a) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

// At least 20 hostile forms; every one must be refused before any socket opens, each with its own code.
const HOSTILE: Array<[string, string]> = [
  ["http://127.0.0.1/x.png", "blocked_address"],
  ["http://127.1/x.png", "blocked_address"],
  ["http://2130706433/x.png", "blocked_address"], // decimal 127.0.0.1
  ["http://0177.0.0.1/x.png", "blocked_address"], // octal
  ["http://0x7f.0.0.1/x.png", "blocked_address"], // hex
  ["http://017700000001/x.png", "blocked_address"], // octal, one number
  ["http://[::1]/x.png", "blocked_address"],
  ["http://[::ffff:127.0.0.1]/x.png", "blocked_address"], // IPv4-mapped
  ["http://[::ffff:a9fe:a9fe]/x.png", "blocked_address"], // IPv4-mapped metadata, hex form
  ["http://[0:0:0:0:0:0:0:1]/x.png", "blocked_address"],
  ["http://[::]/x.png", "blocked_address"],
  ["http://0.0.0.0/x.png", "blocked_address"],
  ["http://10.1.2.3/x.png", "blocked_address"],
  ["http://172.16.0.9/x.png", "blocked_address"],
  ["http://192.168.0.1/x.png", "blocked_address"],
  ["http://169.254.169.254/latest/meta-data/", "blocked_address"],
  ["http://100.100.100.200/latest/meta-data/", "blocked_address"], // Alibaba metadata (CGNAT range)
  ["http://[fd00:ec2::254]/latest/meta-data/", "blocked_address"], // AWS IMDS over IPv6
  ["http://[fe80::1]/x.png", "blocked_address"],
  ["http://[fc00::1]/x.png", "blocked_address"],
  ["http://224.0.0.1/x.png", "blocked_address"],
  ["http://[ff02::1]/x.png", "blocked_address"],
  ["http://255.255.255.255/x.png", "blocked_address"],
  ["http://[64:ff9b::7f00:1]/x.png", "blocked_address"], // NAT64 of 127.0.0.1
  // IPv6 forms that carry an IPv4 address are judged by it (issue 48 finding 16)
  ["http://[::127.0.0.1]/x.png", "blocked_address"], // IPv4-compatible loopback; the URL parser writes [::7f00:1]
  ["http://[::10.0.0.1]/x.png", "blocked_address"], // IPv4-compatible private
  ["http://[::169.254.169.254]/latest/meta-data/", "blocked_address"], // IPv4-compatible metadata
  ["http://[64:ff9b::169.254.169.254]/latest/meta-data/", "blocked_address"], // NAT64 of the metadata address
  ["http://[64:ff9b::192.168.0.1]/x.png", "blocked_address"], // NAT64 of a private address
  ["http://compat.test/x.png", "blocked_address"], // a name answering ::7f00:1
  ["http://198.18.0.1/x.png", "blocked_address"],
  ["http://evil.test/x.png", "blocked_address"], // a name resolving to a private address
  ["http://mixed.test/x.png", "blocked_address"], // one public and one loopback answer
  ["http://v6.test/x.png", "blocked_address"],
  ["http://mapped.test/x.png", "blocked_address"],
  ["http://localhost/x.png", "blocked_host"],
  ["http://foo.localhost./x.png", "blocked_host"],
  ["http://metadata.google.internal/computeMetadata/v1/", "blocked_host"],
  ["http://metadata/computeMetadata/v1/", "blocked_host"],
  ["http://user:pw@example.com/x.png", "uri_credentials_not_allowed"],
  ["ftp://example.com/x.png", "unsupported_uri_scheme"],
  ["file:///etc/passwd", "unsupported_uri_scheme"],
  ["gopher://127.0.0.1:6379/_INFO", "unsupported_uri_scheme"],
  ["http://nx.test/x.png", "host_not_found"],
  ["http://", "invalid_uri"],
];

describe("outbound guard", () => {
  const guard = new OutboundGuard({ resolve, timeoutMs: 2_000 });
  afterAll(() => guard.close());

  it.each(HOSTILE)("refuses %s with %s", async (url, code) => {
    const err = await guard.fetch(url).then(
      () => null,
      (e) => e,
    );
    expect(err?.code).toBe(code);
    expect(err.status).toBeGreaterThanOrEqual(400);
    expect(err.status).toBeLessThan(500);
  });

  it("tells that a private address (a hospital's PACS) can be allowed by the operator, and never offers it for metadata", async () => {
    const pacs = await guard.fetch("http://10.1.2.3/studies/1").then(
      () => null,
      (e) => e,
    );
    expect(pacs?.code).toBe("blocked_address");
    expect(pacs.message).toContain("FETCH_ALLOW_HOSTS");
    const metadata = await guard.fetch("http://169.254.169.254/latest/meta-data/").then(
      () => null,
      (e) => e,
    );
    expect(metadata?.code).toBe("blocked_address");
    expect(metadata.message).not.toContain("FETCH_ALLOW_HOSTS");
  });

  it("has at least 20 hostile forms", () => expect(HOSTILE.length).toBeGreaterThanOrEqual(20));

  it("classifies addresses", () => {
    expect(checkAddress("8.8.8.8").ok).toBe(true);
    expect(checkAddress("2606:4700:4700::1111").ok).toBe(true);
    expect(checkAddress("::ffff:8.8.8.8")).toMatchObject({ ok: true, address: "8.8.8.8" });
    expect(checkAddress("169.254.169.254")).toMatchObject({ ok: false, range: "cloud metadata" });
    expect(checkAddress("not-an-ip")).toMatchObject({ ok: false, range: "invalid" });
  });

  it("judges IPv4-mapped, IPv4-compatible and NAT64 addresses by the IPv4 address they carry (issue 48 finding 16)", () => {
    expect(checkAddress("::127.0.0.1")).toMatchObject({ ok: false, address: "127.0.0.1", range: "loopback" });
    expect(checkAddress("::7f00:1")).toMatchObject({ ok: false, address: "127.0.0.1", range: "loopback" });
    expect(checkAddress("::a9fe:a9fe")).toMatchObject({ ok: false, range: "cloud metadata" });
    expect(checkAddress("64:ff9b::a00:1")).toMatchObject({ ok: false, address: "10.0.0.1", range: "private" });
    // A public IPv4 address stays reachable in every form; through NAT64 it is dialled as the IPv6 address.
    expect(checkAddress("::8.8.8.8")).toMatchObject({ ok: true, address: "8.8.8.8", family: 4 });
    expect(checkAddress("64:ff9b::8.8.8.8")).toMatchObject({ ok: true, address: "64:ff9b::808:808", family: 6 });
    // :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4-compatible 0.0.0.0/0.0.0.1.
    expect(checkAddress("::1")).toMatchObject({ ok: false, range: "loopback" });
    expect(checkAddress("::")).toMatchObject({ ok: false, range: "unspecified" });
    // The local-use NAT64 prefix embeds differently and stays refused as a range.
    expect(checkAddress("64:ff9b:1::808:808").ok).toBe(false);
  });

  it("allow-lists names, suffixes, IPs and CIDRs", () => {
    const a = compileAllowList(["pacs.hospital.org", "*.imaging.local", "10.20.0.0/16", "192.168.1.7"]);
    expect(a.allowsHost("PACS.hospital.org.")).toBe(true);
    expect(a.allowsHost("x.imaging.local")).toBe(true);
    expect(a.allowsHost("evil.org")).toBe(false);
    expect(a.allowsAddress("10.20.3.4")).toBe(true);
    expect(a.allowsAddress("10.21.3.4")).toBe(false);
    expect(a.allowsAddress("::ffff:192.168.1.7")).toBe(true);
    expect(a.allowsAddress("::10.20.3.4")).toBe(true);
    expect(a.allowsAddress("64:ff9b::10.20.3.4")).toBe(true);
    expect(a.allowsAddress("::10.21.3.4")).toBe(false);
  });
});

describe("outbound guard against a live local server", () => {
  let server: http.Server;
  let port: number;
  let guard: OutboundGuard;
  let png: Buffer;

  beforeAll(async () => {
    png = await sharp({ create: { width: 8, height: 6, channels: 3, background: "#336699" } })
      .png()
      .toBuffer();
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      const p = url.pathname;
      if (p === "/ok.png") return void res.writeHead(200, { "content-type": "image/png" }).end(png);
      if (p === "/html") return void res.writeHead(200, { "content-type": "image/png" }).end("<html>hello</html>");
      if (p === "/missing") return void res.writeHead(404).end();
      if (p === "/to-ip") return void res.writeHead(302, { location: `http://127.0.0.1:${port}/ok.png` }).end();
      if (p === "/to-metadata") return void res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      if (p === "/to-file") return void res.writeHead(302, { location: "file:///etc/passwd" }).end();
      if (p.startsWith("/hop/")) {
        const n = Number(p.slice(5));
        return void res.writeHead(302, { location: n <= 1 ? "/ok.png" : `/hop/${n - 1}` }).end();
      }
      if (p === "/big") return void res.writeHead(200, { "content-length": String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024));
      if (p === "/big-chunked") {
        res.writeHead(200);
        let sent = 0;
        const push = () => {
          if (sent > 4 * 1024 * 1024 || res.destroyed) return void res.end();
          sent += 64 * 1024;
          res.write(Buffer.alloc(64 * 1024), () => setImmediate(push));
        };
        return push();
      }
      if (p === "/slow") return void setTimeout(() => res.writeHead(200).end(png), 3_000);
      if (p === "/echo") {
        let body = "";
        req.on("data", (c) => (body += c));
        return void req.on("end", () =>
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: req.method, body })),
        );
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
    guard = new OutboundGuard({ resolve, allowHosts: ["img.test"], maxBytes: 1024 * 1024, timeoutMs: 800, maxRedirects: 3 });
  });
  afterAll(async () => {
    await guard?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  const u = (p: string, host = "img.test") => `http://${host}:${port}${p}`;
  const code = (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e) => e.code,
    );

  it("fetches an allow-listed host by connecting to the address it checked (the name has no real DNS)", async () => {
    const before = resolverCalls;
    const res = await guard.fetch(u("/ok.png"));
    expect(res.status).toBe(200);
    expect(res.body.equals(png)).toBe(true);
    expect(resolverCalls).toBeGreaterThan(before);
  });

  it("refuses the same loopback server when the name is not allow-listed", async () => {
    expect(await code(guard.fetch(u("/ok.png", "other.test")))).toBe("blocked_address");
  });

  it("re-checks every redirect", async () => {
    expect(await code(guard.fetch(u("/to-ip")))).toBe("blocked_address");
    expect(await code(guard.fetch(u("/to-metadata")))).toBe("blocked_address");
    expect(await code(guard.fetch(u("/to-file")))).toBe("unsupported_uri_scheme");
    const ok = await guard.fetch(u("/hop/3"));
    expect([ok.status, ok.redirects]).toEqual([200, 3]);
    expect(await code(guard.fetch(u("/hop/4")))).toBe("too_many_redirects");
  });

  it("caps size (declared and streamed) and time", async () => {
    expect(await code(guard.fetch(u("/big")))).toBe("image_too_large");
    expect(await code(guard.fetch(u("/big-chunked")))).toBe("image_too_large");
    const t0 = Date.now();
    expect(await code(guard.fetch(u("/slow")))).toBe("fetch_timeout");
    expect(Date.now() - t0).toBeLessThan(2_500);
  });

  it("sniffs bytes instead of trusting Content-Type, and reports upstream errors", async () => {
    const ctx = { storagePrefix: "u1", bucket: new LocalBucket(`/tmp/builder-guard-test-${process.pid}`), guard, maxBytes: 1024 * 1024 };
    expect((await fetchImageBytes(u("/ok.png"), ctx)).format).toBe("png");
    expect(await code(fetchImageBytes(u("/html"), ctx))).toBe("unsupported_image_type");
    expect(await code(fetchImageBytes(u("/missing"), ctx))).toBe("fetch_failed");
    expect(await code(fetchImageBytes("data:text/html;base64,PGh0bWw+", ctx))).toBe("invalid_data_uri");
    expect(await code(fetchImageBytes("javascript:alert(1)", ctx))).toBe("unsupported_uri_scheme");
    expect(await code(fetchImageBytes(`data:image/png;base64,${"A".repeat(2 * 1024 * 1024)}`, ctx))).toBe("image_too_large");
  });

  it("guardedFetch serves other callers (callback POSTs) with the same rules", async () => {
    const r = await guardedFetch(`http://127.0.0.1:${port}/echo`, {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
      allowHosts: ["127.0.0.1"],
    });
    expect(JSON.parse(r.body.toString())).toEqual({ method: "POST", body: '{"a":1}' });
    expect(await code(guardedFetch(`http://127.0.0.1:${port}/echo`, { method: "POST", body: "x" }))).toBe("blocked_address");
  });
});
