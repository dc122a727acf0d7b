import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ReplyText } from "../../web/src/components/chat/ReplyText";

// The chat panel's "markdown-lite": replies quote the user's own text (questions, column names), so anything that
// looks like HTML must come out as text, and only http(s) or same-site links become links.

const html = (text: string) => renderToStaticMarkup(createElement(ReplyText, { text }));

describe("chat reply text", () => {
  it("shows HTML in a reply as text, never as elements", () => {
    const out = html('You asked about <img src=x onerror="alert(1)"> and <script>alert(2)</script>.');
    expect(out).not.toMatch(/<img|<script/);
    expect(out).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(out).toContain("&lt;script&gt;alert(2)&lt;/script&gt;");
  });

  it("renders bold, code, lists and fenced code; keeps line breaks inside a paragraph", () => {
    const out = html(
      "Experiment 42's **AUC** is `0.912`.\nSecond line.\n\n- one\n- two\n\n1. first\n2. second\n\n```\ncurl -X POST <url>\n```",
    );
    expect(out).toBe(
      "<p><span>Experiment 42&#x27;s <strong>AUC</strong> is <code>0.912</code>.</span><span><br/>Second line.</span></p>" +
        "<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>" +
        "<pre><code>curl -X POST &lt;url&gt;</code></pre>",
    );
  });

  it("links only http(s) and same-site paths; a javascript: link stays text", () => {
    expect(html("See [the docs](/docs#predict).")).toBe('<p><span>See <a href="/docs#predict">the docs</a>.</span></p>');
    expect(html("At https://builder.example/v1/models/42.")).toBe(
      '<p><span>At <a href="https://builder.example/v1/models/42" target="_blank" rel="noopener noreferrer">https://builder.example/v1/models/42</a>.</span></p>',
    );
    // A bare dashboard path is a link (opened by the app's router); an API path or a file path is not.
    expect(html("Detalles: /experiments/42.")).toBe('<p><span>Detalles: <a href="/experiments/42">/experiments/42</a>.</span></p>');
    expect(html("POST /v1/experiments/42/predict or data/experiments/x")).not.toContain("<a");
    const evil = html("[click](javascript:alert(1)) and [x](//evil.example/a)");
    expect(evil).not.toContain("<a");
    expect(evil).toContain("click (javascript:alert(1)");
  });
});
