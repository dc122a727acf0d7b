import ipaddr from "ipaddr.js";

/**
 * The key one client address is counted under by the per-address limits (sign-in, sign-up, setup, account links).
 * One IPv6 subscriber is handed a whole /64 (RFC 6177; a home router, a phone, a cloud VM alike), so a key per full
 * address let one client spray from 2^64 addresses, each with a fresh allowance (issue 48 finding 15): IPv6 is counted
 * per /64. IPv4 is counted per address, as before, and an IPv4-mapped IPv6 address (::ffff:a.b.c.d, how a dual-stack
 * socket reports an IPv4 client) as that IPv4 address. Anything unparseable is its own key, unchanged.
 */
export function addressKey(ip: string): string {
  const raw = ip.split("%")[0]; // a zone id (fe80::1%eth0) does not make another client
  if (!ipaddr.isValid(raw)) return ip;
  const parsed = ipaddr.parse(raw);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const p = v6.parts;
  return `${new ipaddr.IPv6([p[0], p[1], p[2], p[3], 0, 0, 0, 0]).toString()}/64`;
}
