import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";

// Issue 48 finding 17: `make start` listened on every interface in plain HTTP. Builder's own default is this machine
// only; the container deployments, whose proxy, published port and probes reach the process from outside its
// container, say HOST=0.0.0.0 themselves. The files are read as text (no YAML parser is a dependency).

const read = (p: string) => fs.readFileSync(new URL(`../../${p}`, import.meta.url), "utf8");
const uncommented = (text: string) =>
  text
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trimEnd())
    .filter(Boolean)
    .join("\n");

describe("the listen address", () => {
  it("is 127.0.0.1 unless HOST says otherwise", () => {
    expect(parseConfig({}).HOST).toBe("127.0.0.1");
    expect(parseConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
  });

  it("is every interface in the image and in compose, swarm and Kubernetes, which publish it as they need", () => {
    expect(uncommented(read("Dockerfile"))).toMatch(/^ENV [^\n]*(?:\\\n[^\n]*)*\bHOST=0\.0\.0\.0\b/m);
    // compose: in the env anchor that api and worker share
    expect(uncommented(read("compose.yaml"))).toMatch(/environment: &builder-env\n(?: {4}\S[^\n]*\n)*? {4}HOST: 0\.0\.0\.0\n/);
    expect(uncommented(read("deploy/swarm/builder-stack.yaml"))).toMatch(
      /x-builder-env: &builder-env\n(?: {2}\S[^\n]*\n)*? {2}HOST: 0\.0\.0\.0\n/,
    );
    expect(uncommented(read("deploy/kubernetes/base/config.yaml"))).toMatch(/\ndata:\n(?: {2}\S[^\n]*\n)*? {2}HOST: 0\.0\.0\.0\n/);
    // compose still publishes the plain-HTTP port on the host's loopback unless BUILDER_API_BIND says otherwise.
    expect(read("compose.yaml")).toContain('"${BUILDER_API_BIND:-127.0.0.1}:${BUILDER_PORT:-8080}:8080"');
  });
});
