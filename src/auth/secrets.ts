import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

// Secrets Builder hands out (API keys, session tokens) and the one it keeps (password hashes).
// Keys and tokens are stored only as SHA-256: they are 256-bit random, so a fast hash is enough
// (nothing to brute-force). Passwords are low-entropy, so they get scrypt, a memory-hard hash.

export const API_KEY_PREFIX = "bld_";
/** Characters of a key shown in listings: "bld_" + 8 characters, enough to tell keys apart. */
export const DISPLAY_PREFIX_LENGTH = 12;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString("hex") || "0"}`);
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  // Fixed width (32 bytes -> at most 43 digits) so every key has the same length.
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  return out.padStart(width, "0");
}

/** A new API key: "bld_" + base62 of 32 random bytes (256 bits of entropy). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + base62(randomBytes(32));
}

export function looksLikeApiKey(value: string): boolean {
  return /^bld_[0-9A-Za-z]{43}$/.test(value);
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/** Opaque random token (session cookies, CSRF tokens), URL-safe. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Constant-time string comparison (length leaks, content does not). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

// scrypt N=2^15, r=8, p=1: 32 MiB and ~50-100 ms per hash (OWASP's recommended floor is N=2^17 with r=8,p=1
// or equivalent cost; 2^15 keeps sign-in snappy on small hosts). The parameters travel in the stored string,
// so they can be raised later without breaking existing hashes.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 };

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize("NFKC"), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

function maxmem(N: number, r: number): number {
  return 128 * N * r * 2;
}

/** "scrypt$N$r$p$salt$hash" (salt and hash base64), per-user random 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keylen } = SCRYPT;
  const hash = await scrypt(password, salt, keylen, { N, r, p, maxmem: maxmem(N, r) });
  return ["scrypt", N, r, p, salt.toString("base64"), hash.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], "base64");
  const expected = Buffer.from(parts[5], "base64");
  const actual = await scrypt(password, salt, expected.length, { N, r, p, maxmem: maxmem(N, r) });
  return timingSafeEqual(actual, expected);
}

/** A hash of a password nobody has, so sign-in for an unknown email costs the same time as a wrong password. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomToken());
  return dummyHash;
}
