import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendMail, SmtpError } from "../../src/net/smtp.js";
import { startSmtpStandIn } from "../helpers/alert-receivers.js";

// The alert mailer (src/net/smtp.ts) against a local SMTP stand-in (test/helpers/alert-receivers.ts: a real SMTP
// listener over TCP, not a relay) that requires STARTTLS with a certificate made here for 127.0.0.1.

describe("alert e-mail over SMTP with STARTTLS", () => {
  let dir: string;
  let key: string;
  let cert: string;
  let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
  let plainSmtp: Awaited<ReturnType<typeof startSmtpStandIn>>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-smtp-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    key = fs.readFileSync(path.join(dir, "key.pem"), "utf8");
    cert = fs.readFileSync(path.join(dir, "cert.pem"), "utf8");
    smtp = await startSmtpStandIn({ tls: { key, cert } });
    plainSmtp = await startSmtpStandIn();
  });
  afterAll(async () => {
    await smtp?.close();
    await plainSmtp?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const settings = (port: number, over: Record<string, unknown> = {}) => ({
    host: "127.0.0.1",
    port,
    security: "starttls" as const,
    from: "builder@hospital.example",
    ca: cert,
    timeoutMs: 5000,
    ...over,
  });

  it("upgrades to TLS before sending, and the message arrives whole", async () => {
    await sendMail(settings(smtp.port), {
      to: ["a@hospital.example", "b@hospital.example"],
      subject: "Alerta / Alert",
      text: "Línea 1\n.línea con punto",
    });
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.sessions.at(-1)!.secured).toBe(true);
    expect(smtp.messages[0]).toMatchObject({
      from: "builder@hospital.example",
      to: ["a@hospital.example", "b@hospital.example"],
      text: "Línea 1\n.línea con punto",
    });
  });

  it("refuses a server whose certificate it does not trust, and one that offers no STARTTLS, sending nothing", async () => {
    const before = smtp.messages.length;
    await expect(sendMail(settings(smtp.port, { ca: undefined }), { to: ["a@hospital.example"], subject: "x", text: "x" })).rejects.toThrow(
      /self-signed|certificate/i,
    );
    const noTls = sendMail(settings(plainSmtp.port), { to: ["a@hospital.example"], subject: "x", text: "x" });
    await expect(noTls).rejects.toBeInstanceOf(SmtpError);
    await expect(noTls).rejects.toThrow(/STARTTLS/);
    expect(smtp.messages.length).toBe(before);
    expect(plainSmtp.messages).toHaveLength(0);
  });
});
