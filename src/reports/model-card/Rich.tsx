import { Fragment } from "react";
import type { Params } from "../i18n.js";
import type { CardWords } from "./format.js";

/** A catalog message with bold parts (<b>…</b> in the catalog); every value in it is text, escaped by React. */
export function Rich({ w, k, params }: { w: CardWords; k: string; params?: Params }) {
  return <>{w.rich(k, params).map((p, i) => (p.bold ? <b key={i}>{p.text}</b> : p.text))}</>;
}

/** Text a person typed, line breaks kept as <br>. */
export function Paragraphs({ text }: { text: string }) {
  const lines = text.split(/\r?\n/);
  return (
    <>
      {lines.map((line, i) => (
        <Fragment key={i}>
          {i > 0 ? <br /> : null}
          {line}
        </Fragment>
      ))}
    </>
  );
}

/** A table wider than a phone scrolls sideways inside its box, never the whole page. */
export function Wide({ children }: { children: React.ReactNode }) {
  return <div className="wide">{children}</div>;
}
