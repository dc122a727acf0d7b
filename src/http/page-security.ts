import { createHash } from "node:crypto";

// The one set of security headers for everything a browser may render from this origin: the dashboard (its
// index.html, static files and hashed assets), /docs and the plain-text job log. Issue 42 (finding 7): a page on
// another origin framed the signed-in dashboard through /index.html, which the static mount served without them.
//
// The app loads only its own files; figures are <img> from the same origin, Grad-CAM maps are data: URIs,
// a picked image is a blob: URL. No inline script (except a page's own, allowed by its hash), no framing.
const DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
];

/** The headers, allowing the given inline scripts (by their SHA-256) on top of the app's own files. */
export function pageSecurityHeaders(inlineScripts: string[] = []): Record<string, string> {
  const hashes = inlineScripts.map((s) => ` 'sha256-${createHash("sha256").update(s).digest("base64")}'`).join("");
  const csp = DIRECTIVES.map((d) => (d === "script-src 'self'" ? `${d}${hashes}` : d)).join("; ");
  return {
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
  };
}
