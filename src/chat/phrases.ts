// What `A.*B.*C` meant, in linear time. A backtracking engine retries each unbounded `.*` from every place the
// phrase before it matched, so such a pattern costs the square or the cube of the message's length (issue 42:
// 8000 characters of "my ct shows " held the event loop for 1.4 s). Here each phrase is a regex without unbounded
// repetition (global, so it can start where the previous one ended), searched once per line.

/** The characters `.` does not match: the phrases of one `A.*B` had to share a line. */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * Whether `phrases` occur in this order on `line`, each starting at or after the end of the one before. The first
 * match of a phrase is enough when it is also the one that ends first: true of phrases that start and end at a
 * word boundary (\b…\b), as every one here does except the last of a list, whose end does not matter.
 */
function inOrderOnLine(line: string, phrases: readonly RegExp[]): boolean {
  let from = 0;
  for (const re of phrases) {
    re.lastIndex = from;
    const m = re.exec(line);
    if (!m) return false;
    from = m.index + m[0].length;
  }
  return true;
}

/** Whether `phrases` (global regexes) occur in this order on one line of `text`: `/A.*B.*C/.test(text)`. */
export function phrasesInOrder(text: string, phrases: readonly RegExp[]): boolean {
  for (const re of phrases) if (!re.global) throw new Error(`phrasesInOrder needs global regexes: ${re}`);
  return text.split(LINE_BREAK).some((line) => inOrderOnLine(line, phrases));
}

/** Whether any of the phrase lists occurs in order on one line: `/A.*B|C.*D/.test(text)`. */
export function anyPhrasesInOrder(text: string, lists: ReadonlyArray<readonly RegExp[]>): boolean {
  return lists.some((phrases) => phrasesInOrder(text, phrases));
}
