import { describe, expect, it } from "vitest";
import { addressKey } from "../../src/auth/address-key.js";

// Issue 48 finding 15: the per-address limits counted each full IPv6 address, so one /64 had 2^64 allowances.
describe("the key a client address is counted under", () => {
  it("counts every address of one IPv6 /64 together, and another /64 apart", () => {
    const key = addressKey("2001:db8:48:15::1");
    expect(key).toBe("2001:db8:48:15::/64");
    expect(addressKey("2001:db8:48:15:ffff:ffff:ffff:ffff")).toBe(key);
    expect(addressKey("2001:0db8:0048:0015:0:0:0:2")).toBe(key); // however it is written
    expect(addressKey("fe80::1%eth0")).toBe("fe80::/64");
    expect(addressKey("2001:db8:48:16::1")).not.toBe(key);
  });

  it("keeps IPv4 per address, and counts an IPv4-mapped IPv6 address as its IPv4 address", () => {
    expect(addressKey("10.0.0.1")).toBe("10.0.0.1");
    expect(addressKey("10.0.0.2")).toBe("10.0.0.2");
    expect(addressKey("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(addressKey("::ffff:a00:1")).toBe("10.0.0.1");
  });

  it("leaves what is not an address as it is", () => {
    expect(addressKey("unknown")).toBe("unknown");
  });
});
