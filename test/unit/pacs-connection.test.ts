import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { dicomWebRoot, underRoot } from "../../src/pacs/connection.js";
import { SecretBox } from "../../src/pacs/secret-box.js";

describe("PACS connection: sealed passwords, the root credentials are sent under", () => {
  it("seals and opens a password; another key opens nothing; the sealed text does not hold it", () => {
    const box = SecretBox.fromConfig({ SECRETS_KEY: "k".repeat(40), dataDir: "/nonexistent" });
    const sealed = box.seal("pacs-Passwörd");
    expect(sealed).not.toContain("pacs");
    expect(box.seal("pacs-Passwörd")).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe("pacs-Passwörd");
    expect(SecretBox.fromConfig({ SECRETS_KEY: "x".repeat(40), dataDir: "/nonexistent" }).open(sealed)).toBeNull();
    expect(box.open(sealed.slice(0, -2) + "AA")).toBeNull(); // tampered: the tag fails
  });

  it("without SECRETS_KEY keeps one random key in the data folder, readable by its owner only", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-key-"));
    try {
      const sealed = SecretBox.fromConfig({ dataDir: dir }).seal("s");
      expect(fs.statSync(path.join(dir, "secrets.key")).mode & 0o777).toBe(0o600);
      expect(SecretBox.fromConfig({ dataDir: dir }).open(sealed)).toBe("s");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stores the DICOMweb root without a trailing slash and refuses credentials, queries and other schemes in it", () => {
    expect(dicomWebRoot(" https://pacs.example/dicom-web/ ")).toBe("https://pacs.example/dicom-web");
    expect(() => dicomWebRoot("https://u:p@pacs.example/dicom-web")).toThrow(/username and password fields/);
    expect(() => dicomWebRoot("https://pacs.example/dicom-web?x=1")).toThrow(/query/);
    expect(() => dicomWebRoot("ftp://pacs.example/")).toThrow(/http/);
    expect(() => dicomWebRoot("pacs")).toThrow(/not a URL/);
  });

  it("sends credentials only to links under the root: same origin, the root's path a whole prefix", () => {
    const root = "https://pacs.example/dicom-web";
    expect(underRoot(root, "https://pacs.example/dicom-web/studies/1/series/2/instances/3")).toBe(true);
    expect(underRoot(root, "https://pacs.example/dicom-webx/studies/1")).toBe(false);
    expect(underRoot(root, "https://pacs.example:8443/dicom-web/studies/1")).toBe(false);
    expect(underRoot(root, "http://pacs.example/dicom-web/studies/1")).toBe(false);
    expect(underRoot(root, "https://pacs.example.evil.test/dicom-web/studies/1")).toBe(false);
    expect(underRoot(root, "https://x:y@pacs.example/dicom-web/studies/1")).toBe(false);
  });
});
