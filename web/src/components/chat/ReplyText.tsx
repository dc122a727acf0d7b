import type { ReactNode } from "react";
import { Link } from "../ui";

// The assistant's replies as "markdown-lite": paragraphs, lists, code fences and **bold** / `code` / links, built as
// React elements from plain text. Never innerHTML: replies quote the user's own text (column names, questions), so a
// reply may hold "<img onerror=…>" and must show it as the characters it is.

const SAFE_URL = /^(https?:\/\/|\/(?!\/))/i;
// `code`, **bold**, [text](url), a bare http(s) URL, a bare dashboard path ("Details: /experiments/42").
const INLINE =
  /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])|(?<![\w/:])(\/(?:experiments|settings|docs)(?:[^\s<>()"'`]*[^\s<>()"'`.,;:!?])?)/g;
/** Pages of the dashboard itself: opened by its router, without reloading the app (and the chat with it). */
const DASHBOARD_PAGE = /^\/(experiments|settings)(\/|$|\?)/;

function link(href: string, text: string, key: number): ReactNode {
  if (!SAFE_URL.test(href)) return `${text} (${href})`;
  if (DASHBOARD_PAGE.test(href))
    return (
      <Link key={key} to={href}>
        {text}
      </Link>
    );
  const here = typeof location === "undefined" ? null : location.origin;
  const external = /^https?:/i.test(href) && !(here && (href === here || href.startsWith(`${here}/`)));
  return (
    <a key={key} href={href} {...(external ? { target: "_blank", rel: "noopener noreferrer" } : {})}>
      {text}
    </a>
  );
}

/** One line's inline marks; everything else stays text. */
export function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index;
    if (at > last) out.push(text.slice(last, at));
    const key = out.length;
    if (m[1]) out.push(<code key={key}>{m[1].slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={key}>{m[2].slice(2, -2)}</strong>);
    else if (m[3]) out.push(link(m[4], m[3], key));
    else {
      const url = m[5] ?? m[6];
      out.push(link(url, url, key));
    }
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

type Block = { kind: "p" | "ul" | "ol" | "pre"; lines: string[] };

function blocks(text: string): Block[] {
  const out: Block[] = [];
  let fence: Block | null = null;
  for (const line of text.split("\n")) {
    if (fence) {
      if (/^\s*```/.test(line)) fence = null;
      else fence.lines.push(line);
      continue;
    }
    if (/^\s*```/.test(line)) {
      fence = { kind: "pre", lines: [] };
      out.push(fence);
      continue;
    }
    const item = /^\s*[-*•]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    const kind = item ? "ul" : numbered ? "ol" : line.trim() ? "p" : null;
    if (!kind) {
      out.push({ kind: "p", lines: [] }); // a blank line ends the block
      continue;
    }
    const content = item?.[1] ?? numbered?.[1] ?? line.replace(/^#{1,6}\s+/, "");
    const prev = out.at(-1);
    if (prev && prev.kind === kind && (kind !== "p" || prev.lines.length > 0)) prev.lines.push(content);
    else out.push({ kind, lines: [content] });
  }
  return out.filter((b) => b.lines.length > 0 || b.kind === "pre");
}

/** A reply (or a part of one still streaming in) as safe, lightly formatted text. */
export function ReplyText({ text }: { text: string }) {
  return (
    <>
      {blocks(text).map((b, i) => {
        if (b.kind === "pre")
          return (
            <pre key={i}>
              <code>{b.lines.join("\n")}</code>
            </pre>
          );
        if (b.kind === "p")
          return (
            <p key={i}>
              {b.lines.map((l, j) => (
                <span key={j}>
                  {j > 0 && <br />}
                  {inline(l)}
                </span>
              ))}
            </p>
          );
        const List = b.kind;
        return (
          <List key={i}>
            {b.lines.map((l, j) => (
              <li key={j}>{inline(l)}</li>
            ))}
          </List>
        );
      })}
    </>
  );
}
