import fs from "node:fs";
import { columnLabel, refusals } from "./refusals.js";

// The CSV reader of batch tables. A batch's file comes from anyone with a key, so the reader holds memory and the
// event loop to the size of one row whatever the file: it reads 64 KiB at a time (the loop is free between pieces),
// and a row may hold at most `maxRowChars` characters (delimiters and quotes counted), so a file of one 500 MB line,
// or a quote that never closes, stops at the cap with the line named instead of being gathered into one string.
//
// The format is RFC 4180 as spreadsheets write it: values separated by commas, a value in double quotes may hold
// commas, line breaks and "" for a quote; LF, CRLF or CR ends a row; a UTF-8 BOM is skipped; spaces around a value
// are dropped; a quote inside an unquoted value (5'11") is kept as text, as the datasets' reader keeps it; an empty
// line is skipped. Each row comes with the line it starts on, as a text editor numbers lines (the header is line 1).

export interface CsvRecord {
  values: string[];
  /** The line the row starts on (1 = the file's first line). */
  line: number;
}

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

const enum State {
  /** Before a value: spaces are skipped, a quote opens a quoted value. */
  FieldStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted value: a second quote is a literal one, anything else closed the value. */
  QuoteInQuoted,
  /** After a quoted value's closing quote: spaces, then a comma or the end of the row. */
  AfterQuoted,
}

/** Splits text into rows, piece by piece. */
export class CsvRowSplitter {
  private state = State.FieldStart;
  private field = "";
  private values: string[] = [];
  private rowChars = 0;
  /** The line the current row starts on, and the line now being read. */
  private rowLine = 1;
  private line = 1;
  private quoteLine = 1;
  /** A CR ended the last row or line: an LF right after it belongs to it. */
  private afterCR = false;
  private started = false;
  /** The first row: names columns in messages. */
  private header: string[] | undefined;

  constructor(private readonly maxRowChars: number) {}

  /** The rows this piece completes. */
  feed(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    let i = 0;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    const n = text.length;
    while (i < n) {
      if (this.afterCR) {
        this.afterCR = false;
        if (text.charCodeAt(i) === LF) {
          i++;
          continue;
        }
      }
      switch (this.state) {
        case State.FieldStart: {
          const c = text.charCodeAt(i);
          if (c === SPACE || c === TAB) {
            this.count(1);
            i++;
          } else if (c === QUOTE) {
            this.count(1);
            this.state = State.Quoted;
            this.quoteLine = this.line;
            i++;
          } else this.state = State.Unquoted;
          break;
        }
        case State.Unquoted: {
          let j = i;
          for (; j < n; j++) {
            const c = text.charCodeAt(j);
            if (c === COMMA || c === LF || c === CR) break;
          }
          this.field += text.slice(i, j);
          this.count(j - i);
          if (j === n) return out;
          this.endValue(this.field.trimEnd());
          i = this.separator(text, j, out);
          break;
        }
        case State.Quoted: {
          let j = i;
          for (; j < n; j++) {
            const c = text.charCodeAt(j);
            if (c === QUOTE) break;
            if (c === LF) this.line++;
            else if (c === CR && j + 1 < n && text.charCodeAt(j + 1) !== LF) this.line++;
          }
          this.field += text.slice(i, j);
          this.count(j - i);
          if (j === n) return out;
          this.count(1);
          this.state = State.QuoteInQuoted;
          i = j + 1;
          break;
        }
        case State.QuoteInQuoted: {
          if (text.charCodeAt(i) === QUOTE) {
            this.field += '"';
            this.count(1);
            this.state = State.Quoted;
            i++;
          } else this.state = State.AfterQuoted;
          break;
        }
        case State.AfterQuoted: {
          const c = text.charCodeAt(i);
          if (c === SPACE || c === TAB) {
            this.count(1);
            i++;
          } else if (c === COMMA || c === LF || c === CR) {
            this.endValue(this.field);
            i = this.separator(text, i, out);
          } else throw refusals.textAfterQuote(this.line, columnLabel(this.values.length, this.header));
          break;
        }
      }
    }
    return out;
  }

  /** The last row, when the file does not end with a line break. */
  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    if (this.state === State.Quoted) throw refusals.quoteNotClosed(this.quoteLine);
    if (this.state === State.FieldStart && this.values.length === 0 && this.field === "") return out;
    this.endValue(this.state === State.Unquoted ? this.field.trimEnd() : this.field);
    this.endRow(out);
    return out;
  }

  private count(chars: number): void {
    this.rowChars += chars;
    if (this.rowChars > this.maxRowChars)
      throw this.state === State.Quoted
        ? refusals.quoteRunsOn(this.quoteLine, this.maxRowChars)
        : refusals.lineTooLong(this.rowLine, this.maxRowChars);
  }

  private endValue(value: string): void {
    this.values.push(value);
    this.field = "";
  }

  /** At a comma, LF or CR outside quotes: the next value, or the end of the row. Returns where reading goes on. */
  private separator(text: string, at: number, out: CsvRecord[]): number {
    const c = text.charCodeAt(at);
    this.state = State.FieldStart;
    if (c === COMMA) {
      this.count(1);
      return at + 1;
    }
    this.endRow(out);
    this.line++;
    this.rowLine = this.line;
    if (c === CR) {
      if (at + 1 < text.length) return text.charCodeAt(at + 1) === LF ? at + 2 : at + 1;
      this.afterCR = true;
    }
    return at + 1;
  }

  private endRow(out: CsvRecord[]): void {
    const values = this.values;
    this.values = [];
    this.rowChars = 0;
    if (values.length === 1 && values[0] === "") return; // an empty line
    this.header ??= values;
    out.push({ values, line: this.rowLine });
  }
}

/** The rows of a CSV file, read 64 KiB at a time; messages name a column by the first row's value for it. */
export async function* csvRecords(file: string, maxRowChars: number): AsyncGenerator<CsvRecord> {
  const splitter = new CsvRowSplitter(maxRowChars);
  const stream = fs.createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 });
  try {
    for await (const piece of stream as AsyncIterable<string>) {
      yield* splitter.feed(piece);
    }
    for (const record of splitter.end()) yield record;
  } finally {
    stream.destroy();
  }
}
