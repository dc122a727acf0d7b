import net from "node:net";
import tls from "node:tls";

/**
 * A small SMTP client (RFC 5321) for alert e-mails: EHLO, STARTTLS or TLS, AUTH PLAIN, one message to a few
 * recipients, QUIT. Builder sends nothing else by e-mail (invitations are links an administrator hands over), so
 * this is enough; a failure throws SmtpError with the server's reply, and the caller's outbox retries.
 */

export interface SmtpSettings {
  host: string;
  port: number;
  security: "starttls" | "tls" | "none";
  from: string;
  user?: string;
  password?: string;
  timeoutMs?: number;
  /** Our name in EHLO. */
  clientName?: string;
  /** Extra trusted CA certificates (PEM), for a relay with the hospital's own CA; unset, Node's (NODE_EXTRA_CA_CERTS too). */
  ca?: string;
}

export interface SmtpMessage {
  to: string[];
  subject: string;
  text: string;
  /** Extra headers (e.g. a Message-ID that stays the same on every retry). */
  headers?: Record<string, string>;
}

export class SmtpError extends Error {
  constructor(
    message: string,
    /** The server's reply code; 5xx is permanent, the rest may pass on a retry. */
    readonly code?: number,
  ) {
    super(message);
  }
  get permanent(): boolean {
    return this.code !== undefined && this.code >= 500;
  }
}

/** Reads replies (possibly multi-line: "250-..." then "250 ...") from a socket, one at a time. */
class Replies {
  private buffer = "";
  private waiting?: (r: { code: number; lines: string[] } | Error) => void;
  private ready: Array<{ code: number; lines: string[] } | Error> = [];
  private lines: string[] = [];

  attach(socket: net.Socket | tls.TLSSocket): void {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, nl).replace(/\r$/, "");
        this.buffer = this.buffer.slice(nl + 1);
        this.lines.push(line.slice(4));
        if (line[3] !== "-") {
          this.push({ code: Number(line.slice(0, 3)), lines: this.lines });
          this.lines = [];
        }
      }
    });
    socket.on("error", (err: Error) => this.push(err));
    socket.on("close", () => this.push(new SmtpError("the mail server closed the connection")));
  }

  private push(r: { code: number; lines: string[] } | Error): void {
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w(r);
    } else this.ready.push(r);
  }

  next(): Promise<{ code: number; lines: string[] }> {
    const r = this.ready.shift();
    if (r) return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    return new Promise((resolve, reject) => {
      this.waiting = (x) => (x instanceof Error ? reject(x) : resolve(x));
    });
  }
}

/** SNI carries a name, never an address (the certificate is then checked against the address). */
const sni = (host: string) => (net.isIP(host) ? undefined : host);

/** A header value on one line: no CR/LF can smuggle in another header. */
const oneLine = (v: string) => v.replace(/[\r\n]+/g, " ");

/** RFC 2047 encoded-word for a subject that is not plain ASCII. */
function encodeHeader(v: string): string {
  const line = oneLine(v);
  return /^[\x20-\x7e]*$/.test(line) ? line : `=?UTF-8?B?${Buffer.from(line, "utf8").toString("base64")}?=`;
}

/** The message as sent after DATA: headers, a base64 UTF-8 body in 76-character lines, no line starting with a dot. */
export function formatMessage(from: string, msg: SmtpMessage, date = new Date()): string {
  const headers: Record<string, string> = {
    From: oneLine(from),
    To: msg.to.map(oneLine).join(", "),
    Subject: encodeHeader(msg.subject),
    Date: date.toUTCString(),
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Transfer-Encoding": "base64",
    ...Object.fromEntries(Object.entries(msg.headers ?? {}).map(([k, v]) => [oneLine(k), oneLine(v)])),
  };
  const body =
    Buffer.from(msg.text, "utf8")
      .toString("base64")
      .match(/.{1,76}/g) ?? [];
  return [...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ...body].join("\r\n");
}

export async function sendMail(s: SmtpSettings, msg: SmtpMessage): Promise<void> {
  const timeoutMs = s.timeoutMs ?? 30_000;
  let socket: net.Socket | tls.TLSSocket =
    s.security === "tls"
      ? tls.connect({ host: s.host, port: s.port, servername: sni(s.host), ca: s.ca })
      : net.connect({ host: s.host, port: s.port });
  let replies = new Replies();
  replies.attach(socket);
  socket.setTimeout(timeoutMs, () => socket.destroy(new SmtpError(`the mail server did not answer within ${timeoutMs} ms`)));
  const expect = async (ok: number[], what: string) => {
    const r = await replies.next();
    if (!ok.includes(r.code)) throw new SmtpError(`${what}: the mail server answered ${r.code} ${r.lines.join(" ")}`, r.code);
    return r;
  };
  const command = (line: string, ok: number[], what = line.split(" ")[0]) => {
    socket.write(`${line}\r\n`);
    return expect(ok, what);
  };
  try {
    await expect([220], "greeting");
    const name = s.clientName ?? "builder.localhost";
    let ehlo = await command(`EHLO ${name}`, [250]);
    if (s.security === "starttls") {
      if (!ehlo.lines.some((l) => /^STARTTLS\b/i.test(l)))
        throw new SmtpError("the mail server does not offer STARTTLS (set SMTP_SECURITY=none only for a relay on a trusted network)", 554);
      await command("STARTTLS", [220]);
      const plain = socket;
      plain.removeAllListeners("data");
      socket = tls.connect({ socket: plain, host: s.host, servername: sni(s.host), ca: s.ca });
      replies = new Replies();
      replies.attach(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("secureConnect", () => resolve());
        socket.once("error", reject);
      });
      ehlo = await command(`EHLO ${name}`, [250]);
    }
    if (s.user) {
      const token = Buffer.from(`\u0000${s.user}\u0000${s.password ?? ""}`, "utf8").toString("base64");
      await command(`AUTH PLAIN ${token}`, [235], "AUTH");
    }
    await command(`MAIL FROM:<${oneLine(s.from)}>`, [250], "MAIL FROM");
    for (const to of msg.to) await command(`RCPT TO:<${oneLine(to)}>`, [250, 251], "RCPT TO");
    await command("DATA", [354]);
    const data = formatMessage(s.from, msg)
      .split("\r\n")
      .map((l) => (l.startsWith(".") ? `.${l}` : l))
      .join("\r\n");
    await command(`${data}\r\n.`, [250], "message");
    socket.write("QUIT\r\n");
  } finally {
    socket.end();
    socket.destroy();
  }
}
