// Characters a column name should not hold: they pass CSV parsing (a quoted header may span lines) and training,
// but break whatever lists the columns as text: a snippet's comment, a script, a log line (issue 42, finding 3:
// the header "radius\ntouch PWNED #" became a command in the Try-it snippet). The name is kept as it is (the
// model's inputs must match the file), so this is a warning that says what was found, in words.

/** Line terminators of CSV, Python, JavaScript (U+2028/U+2029) and Unicode (NEL, vertical tab, form feed). */
const LINE_BREAK = /[\n\r\u000b\u000c\u0085\u2028\u2029]/u;
/** Bidirectional controls: they make text display in another order than it is read ("Trojan Source"). */
const DIRECTION = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const CONTROL = /\p{Cc}/u;
const INVISIBLE = /\p{Cf}/u;

const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** What is wrong with a column name, in plain words ("a line break and a tab"), or undefined when nothing is. */
export function headerCharacterProblems(name: string): string | undefined {
  const found: string[] = [];
  const chars = [...name];
  if (chars.some((c) => LINE_BREAK.test(c))) found.push("a line break");
  if (name.includes("\t")) found.push("a tab");
  const control = chars.find((c) => CONTROL.test(c) && !LINE_BREAK.test(c) && c !== "\t");
  if (control) found.push(`a control character (${hex(control)})`);
  const direction = chars.find((c) => DIRECTION.test(c));
  if (direction) found.push(`a character that changes the text direction (${hex(direction)})`);
  const invisible = chars.find((c) => INVISIBLE.test(c) && !DIRECTION.test(c));
  if (invisible) found.push(`an invisible character (${hex(invisible)})`);
  if (found.length === 0) return undefined;
  return found.length === 1 ? found[0] : `${found.slice(0, -1).join(", ")} and ${found.at(-1)}`;
}
