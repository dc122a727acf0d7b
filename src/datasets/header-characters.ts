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

/** A kind of character a column name should not hold (its words: problems:dataset.header_character.<kind>). */
export type HeaderCharacterKind = "line_break" | "tab" | "control" | "direction" | "invisible";

/** What is wrong with a column name, each kind once with its first character (U+XXXX), in this order; empty when nothing is. */
export function headerCharacterProblems(name: string): Array<{ kind: HeaderCharacterKind; char: string }> {
  const found: Array<{ kind: HeaderCharacterKind; char: string }> = [];
  const chars = [...name];
  const lineBreak = chars.find((c) => LINE_BREAK.test(c));
  if (lineBreak) found.push({ kind: "line_break", char: hex(lineBreak) });
  if (name.includes("\t")) found.push({ kind: "tab", char: hex("\t") });
  const control = chars.find((c) => CONTROL.test(c) && !LINE_BREAK.test(c) && c !== "\t");
  if (control) found.push({ kind: "control", char: hex(control) });
  const direction = chars.find((c) => DIRECTION.test(c));
  if (direction) found.push({ kind: "direction", char: hex(direction) });
  const invisible = chars.find((c) => INVISIBLE.test(c) && !DIRECTION.test(c));
  if (invisible) found.push({ kind: "invisible", char: hex(invisible) });
  return found;
}
