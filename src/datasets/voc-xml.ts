// The two lookups the Pascal VOC reader makes in a user's XML file, by indexOf: the regexes they replace were
// polynomial in the file's length (issue 42, finding 2). test/unit/datasets-voc-xml.test.ts compares them.

/**
 * The trimmed text of the first `<name>text</name>` whose text holds no '<', as /<name>\s*([^<]*?)\s*<\/name>/ found
 * it; by indexOf, because that regex tried every split of a whitespace run among its three parts from every
 * `<name>` (polynomial in a user's XML file).
 */
export function tag(xml: string, name: string): string | undefined {
  const open = `<${name}>`;
  const close = `</${name}>`;
  for (let at = xml.indexOf(open); at >= 0; at = xml.indexOf(open, at + 1)) {
    const start = at + open.length;
    const lt = xml.indexOf("<", start);
    if (lt < 0) return undefined;
    if (xml.startsWith(close, lt)) return xml.slice(start, lt).trim();
  }
  return undefined;
}

/** Every `<object>…</object>`, each to its nearest closing tag, as /<object>[\s\S]*?<\/object>/g found them, without rescanning. */
export function objectElements(xml: string): string[] {
  const out: string[] = [];
  for (let at = xml.indexOf("<object>"); at >= 0; at = xml.indexOf("<object>", at)) {
    const end = xml.indexOf("</object>", at + "<object>".length);
    if (end < 0) break; // no later <object> can close either
    out.push(xml.slice(at, end + "</object>".length));
    at = end + "</object>".length;
  }
  return out;
}
