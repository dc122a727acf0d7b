import type { ModelCard } from "../../experiments/model-card.js";
import type { CardWords } from "./format.js";
import { PipelineText } from "./sections-data.js";

/** A warning's explanation in the reader's language. */
export function WarningText({ warning, w }: { warning: ModelCard["warnings"][number]; w: CardWords }) {
  return <PipelineText w={w} text={warning.message} />;
}
