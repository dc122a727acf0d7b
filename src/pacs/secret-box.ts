import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Secrets Builder must hand to another server (the PACS password), unlike the ones it only checks (API keys,
 * passwords: hashed, src/auth/secrets.ts). Sealed with AES-256-GCM: a database dump alone does not reveal them.
 * The key is SECRETS_KEY (any string of 32+ characters, hashed to 256 bits), or else a random key created once in
 * the data folder, readable by Builder's account only (replicas with separate data folders must set SECRETS_KEY).
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromConfig(config: { SECRETS_KEY?: string; dataDir: string }): SecretBox {
    if (config.SECRETS_KEY) return new SecretBox(createHash("sha256").update(config.SECRETS_KEY, "utf8").digest());
    const file = path.join(config.dataDir, "secrets.key");
    if (!fs.existsSync(file)) {
      fs.mkdirSync(config.dataDir, { recursive: true });
      try {
        // "wx": of two processes starting at once, one writes and the other reads what it wrote.
        fs.writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    return new SecretBox(createHash("sha256").update(fs.readFileSync(file, "utf8").trim(), "utf8").digest());
  }

  /** "v1.<iv>.<tag>.<ciphertext>", base64url. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
  }

  /** The secret, or null when it was sealed under another key (SECRETS_KEY changed): it must be entered again. */
  open(sealed: string): string | null {
    const [v, iv, tag, body] = sealed.split(".");
    if (v !== "v1" || !iv || !tag || body === undefined) return null;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}
