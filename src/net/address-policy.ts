import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which destinations an outbound request may reach. Only globally routable unicast addresses pass;
 * loopback, private, link-local, carrier-grade NAT, multicast, broadcast, reserved, documentation and
 * the cloud metadata endpoints are refused, whatever form the address was written in (the WHATWG URL
 * parser already turns decimal, octal and hex IPv4 forms into dotted quads; IPv6 forms that carry an IPv4
 * address are judged by that IPv4 address here, see embeddedIPv4).
 */

/** Metadata services answer on these even where the range itself would be allowed by an allow-list. */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254"]);
const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

export type AddressVerdict = { ok: true; address: string; family: 4 | 6 } | { ok: false; address: string; range: string };

/** Strips IPv6 brackets and a trailing dot; lower-cases. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return h;
}

export function isMetadataHost(host: string): boolean {
  return METADATA_HOSTS.has(normaliseHost(host));
}

const NAT64_PREFIX = ipaddr.parseCIDR("64:ff9b::/96");

/**
 * The IPv4 address an IPv6 address stands for, if it stands for one:
 * - IPv4-mapped ::ffff:a.b.c.d (a dual-stack socket connects to a.b.c.d itself);
 * - IPv4-compatible ::a.b.c.d (deprecated, RFC 4291; the URL parser writes [::127.0.0.1] as [::7f00:1], which
 *   ipaddr.js calls plain "unicast": issue 48 finding 16), except :: and ::1, which are IPv6's own;
 * - NAT64's well-known prefix 64:ff9b::a.b.c.d (RFC 6052): a NAT64 gateway forwards it to a.b.c.d, so a private
 *   a.b.c.d behind it is as reachable as the address itself.
 * The local-use NAT64 prefix (64:ff9b:1::/48) and other translation ranges stay refused as ranges of their own.
 */
export function embeddedIPv4(v6: ipaddr.IPv6): { v4: ipaddr.IPv4; connectVia: "v4" | "v6" } | undefined {
  const p = v6.parts;
  const low32 = () => ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
  if (v6.isIPv4MappedAddress()) return { v4: v6.toIPv4Address(), connectVia: "v4" };
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && p[7] <= 1)) return { v4: low32(), connectVia: "v4" };
  // Through NAT64 the IPv6 address is the way there (an IPv6-only host has no IPv4 route to the embedded one).
  if (v6.match(NAT64_PREFIX)) return { v4: low32(), connectVia: "v6" };
  return undefined;
}

/** Classifies one IP address string (v4 or v6). Anything unparseable is refused. */
export function checkAddress(address: string): AddressVerdict {
  const raw = normaliseHost(address).split("%")[0]; // zone ids (fe80::1%eth0) say nothing about the range
  if (!ipaddr.isValid(raw)) return { ok: false, address, range: "invalid" };
  const parsed = ipaddr.parse(raw);
  const embedded = parsed.kind() === "ipv6" ? embeddedIPv4(parsed as ipaddr.IPv6) : undefined;
  // Judged by the IPv4 address it carries; the verdict names that address, so the refusal reads "127.0.0.1 (loopback)".
  const judged = embedded?.v4 ?? parsed;
  const text = judged.toString();
  if (METADATA_ADDRESSES.has(text)) return { ok: false, address: text, range: "cloud metadata" };
  const range = judged.range();
  // ipaddr.js names every special-purpose block; "unicast" is what is left: the public internet.
  if (range !== "unicast") return { ok: false, address: text, range };
  if (embedded?.connectVia === "v6") return { ok: true, address: parsed.toString(), family: 6 };
  return { ok: true, address: text, family: judged.kind() === "ipv4" ? 4 : 6 };
}

/** One allow-list entry: an exact host, a suffix (".hospital.org" or "*.hospital.org"), an IP or a CIDR. */
export interface AllowList {
  allowsHost(host: string): boolean;
  allowsAddress(address: string): boolean;
}

export function compileAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const entry of entries.map(normaliseHost).filter(Boolean)) {
    if (entry.includes("/") && ipaddr.isValidCIDR(entry)) cidrs.push(ipaddr.parseCIDR(entry));
    else if (entry.startsWith("*.")) suffixes.push(entry.slice(1));
    else if (entry.startsWith(".")) suffixes.push(entry);
    else if (net.isIP(entry)) cidrs.push([ipaddr.parse(entry), net.isIPv4(entry) ? 32 : 128]);
    else hosts.add(entry);
  }
  return {
    allowsHost(host) {
      const h = normaliseHost(host);
      return hosts.has(h) || suffixes.some((s) => h.endsWith(s));
    },
    allowsAddress(address) {
      const raw = normaliseHost(address);
      if (!ipaddr.isValid(raw)) return false;
      const parsed = ipaddr.parse(raw);
      // An IPv6 form of an allowed IPv4 address is allowed, and only that: 10.0.0.0/8 lets in [::ffff:10.1.2.3].
      const a = (parsed.kind() === "ipv6" ? embeddedIPv4(parsed as ipaddr.IPv6)?.v4 : undefined) ?? parsed;
      return cidrs.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
    },
  };
}
