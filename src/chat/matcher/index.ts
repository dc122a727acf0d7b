import { IntentMatcher } from "./matcher.js";
import { readWeights } from "./table.js";

let loaded: IntentMatcher | undefined;
/** The matcher of the committed weights (src/chat/intents/weights.json), loaded on first use, one per process. */
export const intentMatcher = (): IntentMatcher => (loaded ??= new IntentMatcher(readWeights()));
