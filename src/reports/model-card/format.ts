import { format, translator, type Params, type ReportLanguage, type Translator } from "../i18n.js";

// How the card writes numbers in the reader's language: "0.912" and "12.5%" in English, "0,912" and "12,5 %" in
// Spanish. A missing figure is an en dash. Dates stay ISO (2026-11-29): unambiguous in both languages.

export interface CardWords extends Translator {
  num(v: number | null | undefined, digits?: number): string;
  count(v: number | null | undefined): string;
  pct(v: number | null | undefined, digits?: number): string;
  date(v: string | null | undefined): string;
  /** A number as written, up to 6 decimals (English keeps JavaScript's own digits). */
  plain(v: number): string;
  /** "0.812 – 0.901", or an en dash when neither end is known. */
  range(low: number | null | undefined, high: number | null | undefined, digits?: number): string;
  /** A message whose <b>…</b> parts are bold: [text, bold, text, …] with the placeholders filled. */
  rich(key: string, params?: Params): Array<{ text: string; bold: boolean }>;
}

const LOCALE: Record<ReportLanguage, string> = { en: "en-US", es: "es-ES" };
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

export function cardWords(lang: ReportLanguage): CardWords {
  const tr = translator(lang, "model-card");
  const fixed = new Map<number, Intl.NumberFormat>();
  const numFormat = (digits: number) => {
    let f = fixed.get(digits);
    if (!f) {
      f = new Intl.NumberFormat(LOCALE[lang], { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false });
      fixed.set(digits, f);
    }
    return f;
  };
  const counts = new Intl.NumberFormat(LOCALE[lang]);
  const num = (v: number | null | undefined, digits = 3) => (finite(v) ? numFormat(digits).format(v) : "–");
  return {
    ...tr,
    num,
    count: (v) => (finite(v) ? counts.format(v) : "–"),
    pct: (v, digits = 1) =>
      finite(v) ? new Intl.NumberFormat(LOCALE[lang], { style: "percent", maximumFractionDigits: digits }).format(v) : "–",
    date: (v) => (v ? v.slice(0, 10) : "–"),
    plain: (v) =>
      lang === "en" ? String(v) : new Intl.NumberFormat(LOCALE[lang], { maximumFractionDigits: 6, useGrouping: false }).format(v),
    range: (low, high, digits = 3) => (low == null && high == null ? "–" : `${num(low, digits)} – ${num(high, digits)}`),
    rich: (key, params) => {
      const where = `${lang}/model-card "${key}"`;
      let bold = false;
      const parts: Array<{ text: string; bold: boolean }> = [];
      for (const piece of tr.message(key, params).split(/(<\/?b>)/)) {
        if (piece === "<b>" || piece === "</b>") bold = piece === "<b>";
        else if (piece) parts.push({ text: format(piece, params, where), bold });
      }
      return parts;
    },
  };
}
