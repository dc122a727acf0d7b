import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import net from "node:net";
import tls from "node:tls";

/**
 * Local receivers for alert deliveries. The webhook receiver is a real HTTP server; the SMTP one is a local
 * stand-in for a hospital's mail relay: a real SMTP listener (greeting, EHLO, MAIL, RCPT, DATA, QUIT over TCP) that
 * keeps what it is sent, without relaying it anywhere.
 */

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

export async function startWebhookReceiver(statusFor: (n: number) => number = () => 200) {
  const received: ReceivedHook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = statusFor(received.length + 1);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "not now");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/builder`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A receiver's check of X-Builder-Signature: t=<s>,v1=<hex HMAC-SHA256 of "<t>.<body>">, as docs/experiments.md says. */
export function signatureValid(secret: string, header: string | undefined, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!m) return false;
  const want = createHmac("sha256", secret).update(`${m[1]}.${body}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2], "hex"));
}

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
  /** The text body, decoded from base64. */
  text: string;
  subject: string;
}

/** With `tls`, the stand-in offers STARTTLS and requires it before MAIL (as a relay on an untrusted network should). */
export async function startSmtpStandIn(opts: { tls?: { key: string; cert: string } } = {}) {
  const messages: ReceivedMail[] = [];
  const sessions: Array<{ secured: boolean }> = [];
  const server = net.createServer((plain) => {
    let socket: net.Socket | tls.TLSSocket = plain;
    const session = { secured: false };
    sessions.push(session);
    let buffer = "";
    let inData = false;
    let from = "";
    let to: string[] = [];
    const say = (line: string) => socket.write(`${line}\r\n`);
    say("220 stand-in.local ESMTP");
    const onData = (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          const data = buffer
            .slice(0, end)
            .split("\r\n")
            .map((l) => (l.startsWith("..") ? l.slice(1) : l))
            .join("\r\n");
          buffer = buffer.slice(end + 5);
          inData = false;
          const [head, ...rest] = data.split("\r\n\r\n");
          const subject = /^Subject: (.*)$/m.exec(head)?.[1] ?? "";
          messages.push({ from, to, data, subject, text: Buffer.from(rest.join("").replace(/\r\n/g, ""), "base64").toString("utf8") });
          say("250 2.0.0 queued");
          continue;
        }
        const nl = buffer.indexOf("\r\n");
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO")
          say(opts.tls && !session.secured ? "250-stand-in.local\r\n250 STARTTLS" : "250-stand-in.local\r\n250 8BITMIME");
        else if (line.toUpperCase() === "STARTTLS" && opts.tls) {
          say("220 2.0.0 ready to start TLS");
          plain.removeListener("data", onData);
          socket = new tls.TLSSocket(plain, { isServer: true, key: opts.tls.key, cert: opts.tls.cert });
          socket.setEncoding("utf8");
          socket.on("data", onData);
          socket.on("error", () => {});
          session.secured = true;
          buffer = "";
          return;
        } else if (verb === "MAIL" && opts.tls && !session.secured) say("530 5.7.0 must issue a STARTTLS command first");
        else if (verb === "MAIL") {
          from = /<([^>]*)>/.exec(line)?.[1] ?? "";
          to = [];
          say("250 2.1.0 ok");
        } else if (verb === "RCPT") {
          to.push(/<([^>]*)>/.exec(line)?.[1] ?? "");
          say("250 2.1.5 ok");
        } else if (verb === "DATA") {
          inData = true;
          say("354 end with <CRLF>.<CRLF>");
        } else if (verb === "QUIT") {
          say("221 bye");
          socket.end();
        } else say("502 5.5.2 not implemented");
      }
    };
    plain.setEncoding("utf8");
    plain.on("data", onData);
    plain.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  return { port, messages, sessions, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export async function until<T>(what: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}
