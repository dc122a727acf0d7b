import { describe, expect, it } from "vitest";
import { fetchImageBytes, type ImageFetchContext } from "../../src/net/image-fetch.js";
import { OutboundGuard } from "../../src/net/outbound-guard.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";

// data: URIs never reach the bucket or the network; the context is only what fetchImageBytes' signature asks for.
const ctx: ImageFetchContext = {
  storagePrefix: "u1",
  bucket: new LocalBucket(`/tmp/builder-data-uri-test-${process.pid}`),
  guard: new OutboundGuard({}),
  maxBytes: 1024 * 1024,
};

// A PNG signature and a few more bytes: 13 bytes, so its base64 ends in "==" (and 14 bytes, "=").
const png13 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xfb, 0xff, 0xfe, 0x3e, 0x3f]);
const png14 = Buffer.concat([png13, Buffer.from([0xbf])]);
const uri = (payload: string) => `data:image/png;base64,${payload}`;

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe("data: URI payloads (the fast re-encoding check accepts what the full check accepts, and no more)", () => {
  it("accepts the standard alphabet, padded and unpadded, and the URL-safe one", async () => {
    for (const bytes of [png13, png14]) {
      const std = bytes.toString("base64");
      expect(std).toMatch(/[+/]/); // the bytes were chosen so that both alphabets differ
      for (const payload of [
        std,
        std.replace(/=+$/, ""),
        bytes.toString("base64url"),
        `${bytes.toString("base64url")}==`.slice(0, std.length),
      ]) {
        const r = await fetchImageBytes(uri(payload), ctx);
        expect([payload, r.format, r.bytes.equals(bytes)]).toEqual([payload, "png", true]);
      }
    }
  });

  it("still accepts payloads that are valid but not what Node writes (non-zero trailing bits, mixed alphabets)", async () => {
    const std = png13.toString("base64"); // ends in one significant character and "=="
    const last = std.length - 3;
    const loose = `${std.slice(0, last)}${String.fromCharCode(std.charCodeAt(last) + 1)}==`;
    expect(Buffer.from(loose, "base64").toString("base64")).not.toBe(loose);
    expect((await fetchImageBytes(uri(loose), ctx)).bytes.equals(png13)).toBe(true);
    const mixed = std.replace("/", "_");
    expect(mixed).not.toBe(std);
    expect((await fetchImageBytes(uri(mixed), ctx)).bytes.equals(png13)).toBe(true);
  });

  it("refuses characters outside base64, wherever they are, and too much padding", async () => {
    const std = png14.toString("base64");
    for (const bad of [
      `*${std}`,
      `${std.slice(0, 8)} ${std.slice(8)}`,
      `${std.slice(0, 8)}\n${std.slice(8)}`,
      `${std}*`,
      `${std}==`,
      `${std.slice(0, 4)}=${std.slice(4)}`,
    ]) {
      expect([bad, await code(fetchImageBytes(uri(bad), ctx))]).toEqual([bad, "invalid_data_uri"]);
    }
  });
});
