import type { ModelCard } from "../../experiments/model-card.js";
import type { WarningFacts } from "../../experiments/warnings.js";
import type { CardWords } from "./format.js";
import { warningWords } from "./warning-words.js";

// A warning's explanation on the card, in the reader's language (warning-words.ts words it from its facts).

export function WarningText({
  warning,
  facts,
  w,
}: {
  warning: ModelCard["warnings"][number];
  facts: WarningFacts | undefined;
  w: CardWords;
}) {
  const words = facts ? warningWords(warning.code, facts, w) : null;
  if (words !== null) return <>{words}</>;
  // A warning this page cannot word (a rule newer than its catalog): the API's English, marked as English.
  if (w.lang === "en") return <>{warning.message}</>;
  return <span lang="en">{warning.message}</span>;
}
