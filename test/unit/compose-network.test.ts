import fs from "node:fs";
import { describe, expect, it } from "vitest";

// compose.yaml's network defaults (issue 42, findings 6 and 12c-d), read from the file itself. No YAML parser is
// a dependency of this project, so the file is cut into its services by indentation (two spaces under
// `services:`, as the file is written); each check looks inside one service's block only.

const root = new URL("../../", import.meta.url);
const read = (p: string) => fs.readFileSync(new URL(p, root), "utf8");
const COMPOSE = read("compose.yaml");

/** service name -> its block's lines, comments dropped. */
function services(text: string): Map<string, string[]> {
  const lines = text.split("\n").map((l) => l.replace(/(^|\s)#.*$/, "").trimEnd());
  const start = lines.indexOf("services:");
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break; // the next top-level key (volumes:)
    const name = /^ {2}([A-Za-z0-9_-]+):$/.exec(line)?.[1];
    if (name) out.set(name, (current = []));
    else if (line.trim()) current?.push(line);
  }
  return out;
}

/** The entries of a list key (`ports:`, `cap_add:` ...) in a service block: `- "x"` lines below it, or [a, b]. */
function listOf(block: string[], key: string): string[] {
  const at = block.findIndex((l) => l.trim().startsWith(`${key}:`));
  if (at < 0) return [];
  const inline = /:\s*\[(.*)\]\s*$/.exec(block[at]!)?.[1];
  if (inline !== undefined)
    return inline
      .split(",")
      .map((x) => x.trim().replace(/^["']|["']$/g, ""))
      .filter(Boolean);
  const indent = block[at]!.search(/\S/);
  const items: string[] = [];
  for (const line of block.slice(at + 1)) {
    if (line.search(/\S/) <= indent) break;
    const item = /^\s*-\s*(.*)$/.exec(line)?.[1];
    if (item !== undefined) items.push(item.replace(/^["']|["']$/g, ""));
  }
  return items;
}

const all = services(COMPOSE);

describe("compose.yaml: what is published, and where", () => {
  it("finds the services (the cutting above works on this file)", () => {
    expect([...all.keys()]).toEqual(expect.arrayContaining(["postgres", "redis", "migrate", "api", "worker", "proxy", "llm"]));
  });

  it("every published port names its host address, and that address defaults to 127.0.0.1", () => {
    const published = [...all].flatMap(([name, block]) => listOf(block, "ports").map((p) => [name, p] as const));
    expect(published.length).toBeGreaterThanOrEqual(3);
    for (const [name, port] of published) {
      // HOST:HOSTPORT:CONTAINERPORT with HOST = ${VAR:-127.0.0.1} (or 127.0.0.1 itself): never "8080:8080",
      // which Docker publishes on every interface, past the host's firewall.
      expect(port, `${name}: ${port}`).toMatch(/^(\$\{[A-Z_]+:-127\.0\.0\.1\}|127\.0\.0\.1):(\$\{[A-Z_]+:-[\d-]+\}|[\d-]+):\d+$/);
    }
    expect(COMPOSE).not.toMatch(/network_mode:\s*"?host/);
    for (const [name, block] of all) expect(listOf(block, "expose"), name).toEqual([]);
  });

  it("only the proxy is meant for the network: it publishes HTTPS and the http redirect, the api only for this host", () => {
    const proxyPorts = listOf(all.get("proxy")!, "ports");
    expect(proxyPorts).toEqual([
      "${BUILDER_BIND:-127.0.0.1}:${BUILDER_HTTPS_PORT:-443}:8443",
      "${BUILDER_BIND:-127.0.0.1}:${BUILDER_HTTP_PORT:-80}:8080",
    ]);
    expect(listOf(all.get("api")!, "ports")).toEqual(["${BUILDER_API_BIND:-127.0.0.1}:${BUILDER_PORT:-8080}:8080"]);
    for (const name of ["postgres", "redis", "migrate", "worker", "llm"]) expect(listOf(all.get(name)!, "ports"), name).toEqual([]);
  });

  it("the proxy terminates TLS with a certificate (the hospital's, else a self-signed one), redirects http, forwards to api", () => {
    const proxy = all.get("proxy")!.join("\n");
    expect(proxy).toContain("context: docker/proxy");
    expect(listOf(all.get("proxy")!, "volumes")).toContain("./tls:/tls:ro");
    expect(listOf(all.get("proxy")!, "cap_drop")).toEqual(["ALL"]);
    const nginx = read("docker/proxy/nginx.conf");
    expect(nginx).toMatch(/listen 8443 ssl/);
    expect(nginx).toMatch(/include \/run\/builder-proxy\/tls\.conf;/);
    expect(nginx).toMatch(/ssl_protocols TLSv1\.2 TLSv1\.3;/);
    expect(nginx).toMatch(/include \/run\/builder-proxy\/upstream\.conf;/);
    expect(nginx).toMatch(/proxy_pass \$builder_api;/);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    const entry = read("docker/proxy/entrypoint.sh");
    expect(entry).toContain("/tls/cert.pem");
    expect(entry).toMatch(/openssl req -x509/);
    expect(entry).toMatch(/return 308 https:/);
    // The api's address defaults to compose's and Swarm's service name (Kubernetes sets BUILDER_API_UPSTREAM).
    expect(entry).toContain('upstream="${BUILDER_API_UPSTREAM:-api:8080}"');
    expect(entry).toContain("printf 'set $builder_api http://%s;\\n' \"$upstream\" >/run/builder-proxy/upstream.conf");
    expect(read(".gitignore")).toMatch(/^\/tls\/\*\.pem$/m);
  });
});

describe("compose.yaml: redis and the optional LLM", () => {
  it("redis asks for REDIS_PASSWORD, keeps protected mode, and the api and worker use it", () => {
    const redis = all.get("redis")!.join("\n");
    expect(redis).toContain('"--requirepass", "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}"');
    expect(redis).not.toContain("protected-mode");
    expect(redis).toMatch(/grep -q PONG/); // redis-cli says NOAUTH and exits 0 without the password
    expect(COMPOSE).toMatch(/REDIS_URL: redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379/);
    expect(read("docker/local/redis.Dockerfile")).not.toContain("protected-mode");
  });

  it("the LLM image is a pinned release and runs as an unprivileged user with a writable cache", () => {
    const llm = all.get("llm")!.join("\n");
    const image = /image: \$\{LLM_IMAGE:-([^}]+)\}/.exec(llm)?.[1];
    expect(image).toMatch(/^vllm\/vllm-openai:v\d+\.\d+\.\d+$/);
    expect(llm).toMatch(/user: "10002:10002"/);
    expect(llm).toMatch(/HF_HOME: \/cache/);
    expect(listOf(all.get("llm")!, "volumes")).toEqual(["hf-cache:/cache"]);
    const owner = all.get("llm-cache-owner")!.join("\n");
    expect(owner).toContain('entrypoint: ["chown", "-R", "10002:10002", "/cache"]');
    expect(llm).toMatch(/llm-cache-owner:\s*\n\s*condition: service_completed_successfully/);
  });
});
