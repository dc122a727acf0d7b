import dns from "node:dns";
import net from "node:net";
import { Agent, buildConnector, request } from "undici";
import { ApiError, msg, type Message } from "../errors.js";
import { checkAddress, compileAllowList, isMetadataHost, normaliseHost, type AllowList } from "./address-policy.js";

/**
 * The one way Builder reaches out to a URL a user gave it (image links, callback_url POSTs).
 * - only http(s), no credentials in the URL;
 * - the host is resolved here and every address checked (address-policy.ts); the socket then connects to
 *   the checked address itself, so a second DNS answer cannot swap in an internal one (DNS rebinding);
 * - redirects are followed by hand (at most maxRedirects), each new URL checked like the first;
 * - one deadline for the whole exchange and a byte cap on the body, counted as it streams in.
 * Hosts in the allow-list (FETCH_ALLOW_HOSTS: names, *.suffixes, IPs, CIDRs) may be on private networks;
 * cloud metadata endpoints stay refused whatever the list says.
 */

export class OutboundRefusal extends ApiError {}

export const refuse = (status: number, code: string, text: Message | string, details?: Record<string, unknown>) =>
  new OutboundRefusal(status, code, text, details);

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface OutboundGuardOptions {
  allowHosts?: readonly string[];
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  /** Tests inject a resolver to map names to chosen addresses; defaults to the system resolver. */
  resolve?: Resolver;
}

export interface GuardedFetchOptions {
  method?: "GET" | "POST" | "PUT" | "HEAD";
  headers?: Record<string, string>;
  body?: string | Buffer;
  maxBytes?: number;
  timeoutMs?: number;
  /** Redirects are followed for GET/HEAD only; other methods get the 3xx back. */
  maxRedirects?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: number;
}

const systemResolve: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export class OutboundGuard {
  private readonly allow: AllowList;
  private readonly resolve: Resolver;
  private readonly agent: Agent;

  constructor(private readonly opts: OutboundGuardOptions = {}) {
    this.allow = compileAllowList(opts.allowHosts ?? []);
    this.resolve = opts.resolve ?? systemResolve;
    const base = buildConnector({ timeout: opts.timeoutMs ?? 10_000 });
    // Every new connection goes through checkHost; the socket is opened to the address it returned.
    this.agent = new Agent({
      connections: 16,
      connect: (o, cb) => {
        this.pinnedAddress(o.hostname).then(
          (address) => {
            const host = normaliseHost(o.hostname);
            const servername = o.servername ?? (net.isIP(host) ? undefined : host);
            base({ ...o, hostname: address, servername }, cb);
          },
          (err: Error) => cb(err, null),
        );
      },
    });
  }

  /** Checks a URL's form (scheme, credentials, metadata names) without resolving it. */
  checkUrl(raw: string | URL): URL {
    let url: URL;
    try {
      url = raw instanceof URL ? raw : new URL(raw);
    } catch {
      throw refuse(400, "invalid_uri", msg("net.unparsable_url"));
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw refuse(400, "unsupported_uri_scheme", msg("net.scheme_not_http", { scheme: url.protocol }));
    }
    if (url.username || url.password) throw refuse(400, "uri_credentials_not_allowed", msg("net.credentials_in_url"));
    const host = normaliseHost(url.hostname);
    if (!host) throw refuse(400, "invalid_uri", msg("net.no_host"));
    if (isMetadataHost(host)) throw refuse(403, "blocked_host", msg("net.metadata_host", { host }));
    if (!this.allow.allowsHost(host) && (host === "localhost" || host.endsWith(".localhost"))) {
      throw refuse(403, "blocked_host", msg("net.this_machine", { host }));
    }
    return url;
  }

  /** Resolves a host and returns the one address to connect to, or throws the refusal. */
  async pinnedAddress(hostname: string): Promise<string> {
    const host = normaliseHost(hostname);
    const byName = this.allow.allowsHost(host);
    let addresses: Array<{ address: string }>;
    if (net.isIP(host)) addresses = [{ address: host }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw refuse(422, "host_not_found", msg("net.host_not_found", { host }));
      }
      if (!addresses.length) throw refuse(422, "host_not_found", msg("net.host_not_found", { host }));
    }
    // Every address must pass, not only the first: a name answering public + private is refused.
    let connectTo: string | undefined;
    for (const { address } of addresses) {
      const verdict = checkAddress(address);
      // The checked form: an IPv4-compatible ::8.8.8.8 is dialled as 8.8.8.8, which is what was judged.
      if (verdict.ok) {
        connectTo ??= verdict.address;
        continue;
      }
      const allowed = verdict.range !== "cloud metadata" && verdict.range !== "invalid" && (byName || this.allow.allowsAddress(address));
      if (!allowed) {
        // A clinician whose PACS link is refused needs to know the refusal is a setting, and whose: only ranges an
        // operator can allow get that hint (cloud metadata and invalid addresses are never fetched).
        const hinted = verdict.range !== "cloud metadata" && verdict.range !== "invalid";
        throw refuse(
          403,
          "blocked_address",
          msg(hinted ? "net.private_address_allowable" : "net.private_address", { host, address: verdict.address, range: verdict.range }),
          {
            host,
            address: verdict.address,
            range: verdict.range,
          },
        );
      }
      connectTo ??= normaliseHost(address);
    }
    return connectTo ?? normaliseHost(addresses[0].address);
  }

  async fetch(rawUrl: string, o: GuardedFetchOptions = {}): Promise<GuardedResponse> {
    const method = o.method ?? "GET";
    const maxBytes = o.maxBytes ?? this.opts.maxBytes ?? 20 * 1024 * 1024;
    const timeoutMs = o.timeoutMs ?? this.opts.timeoutMs ?? 10_000;
    const maxRedirects = method === "GET" || method === "HEAD" ? (o.maxRedirects ?? this.opts.maxRedirects ?? 3) : 0;
    const signal = AbortSignal.timeout(timeoutMs);
    let url = this.checkUrl(rawUrl);
    for (let redirects = 0; ; redirects++) {
      await this.pinnedAddress(url.hostname); // refuse before any socket work, with the precise reason
      let res;
      try {
        res = await request(url, { method, headers: o.headers, body: o.body, dispatcher: this.agent, signal });
      } catch (err) {
        throw this.mapError(err, signal, timeoutMs);
      }
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location && maxRedirects >= 0 && (method === "GET" || method === "HEAD")) {
        res.body.resume();
        if (redirects >= maxRedirects) throw refuse(422, "too_many_redirects", msg("net.too_many_redirects", { max: maxRedirects }));
        url = this.checkUrl(new URL(String(location), url));
        continue;
      }
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.body.destroy();
        throw refuse(413, "image_too_large", msg("net.response_too_large", { bytes: declared, max: maxBytes }));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > maxBytes) {
            res.body.destroy();
            throw refuse(413, "image_too_large", msg("net.response_over_limit", { max: maxBytes }));
          }
          chunks.push(chunk);
        }
      } catch (err) {
        throw this.mapError(err, signal, timeoutMs);
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), url: url.toString(), redirects };
    }
  }

  private mapError(err: unknown, signal: AbortSignal, timeoutMs: number): Error {
    if (err instanceof ApiError) return err;
    if (signal.aborted) return refuse(422, "fetch_timeout", msg("net.timeout", { ms: timeoutMs }));
    const e = err as { code?: string; message?: string; cause?: unknown };
    if (e?.cause instanceof ApiError) return e.cause;
    return refuse(422, "fetch_failed", msg("net.fetch_failed", { why: e?.code ?? e?.message ?? "error" }));
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const guards = new Map<string, OutboundGuard>();

/**
 * General-purpose guarded fetch (callback POSTs, webhooks): one shared guard per allow-list.
 * Throws an OutboundRefusal (an ApiError with its own code) for every refused destination.
 */
export function guardedFetch(url: string, opts: GuardedFetchOptions & { allowHosts?: readonly string[] } = {}): Promise<GuardedResponse> {
  const key = (opts.allowHosts ?? []).join(",");
  let guard = guards.get(key);
  if (!guard) guards.set(key, (guard = new OutboundGuard({ allowHosts: opts.allowHosts })));
  return guard.fetch(url, opts);
}
