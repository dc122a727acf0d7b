import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which destinations an outbound request may reach. Only globally routable unicast addresses pass;
 * loopback, private, link-local, carrier-grade NAT, multicast, broadcast, reserved, documentation and
 * the cloud metadata endpoints are refused, whatever form the address was written in (the WHATWG URL
 * parser already turns decimal, octal and hex IPv4 forms into dotted quads; IPv4-mapped IPv6 is unwrapped here).
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

/** Classifies one IP address string (v4 or v6). Anything unparseable is refused. */
export function checkAddress(address: string): AddressVerdict {
  const raw = normaliseHost(address).split("%")[0]; // zone ids (fe80::1%eth0) say nothing about the range
  if (!ipaddr.isValid(raw)) return { ok: false, address, range: "invalid" };
  let parsed = ipaddr.parse(raw);
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  const text = parsed.toString();
  if (METADATA_ADDRESSES.has(text)) return { ok: false, address: text, range: "cloud metadata" };
  const range = parsed.range();
  // ipaddr.js names every special-purpose block; "unicast" is what is left: the public internet.
  if (range !== "unicast") return { ok: false, address: text, range };
  return { ok: true, address: text, family: parsed.kind() === "ipv4" ? 4 : 6 };
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
      let a = ipaddr.parse(raw);
      if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
      return cidrs.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
    },
  };
}
