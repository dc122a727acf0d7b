// Retrains the chat's intent matcher from its example table (issue 53) and writes the weights it answers with:
//   npx tsx scripts/train-chat-intents.ts          writes src/chat/intents/weights.json
//   npx tsx scripts/train-chat-intents.ts --check  fails when the committed weights are not what the table gives
// Deterministic: the same table gives the same file byte for byte (test/unit/chat-matcher.test.ts retrains it).
import fs from "node:fs";
import { readIntentTables, WEIGHTS_PATH } from "../src/chat/matcher/table.js";
import { examplesOf, train } from "../src/chat/matcher/train.js";

const started = Date.now();
const weights = train(examplesOf(readIntentTables()));
const text = `${JSON.stringify(weights, null, 1)}\n`;
if (process.argv.includes("--check")) {
  const same = fs.existsSync(WEIGHTS_PATH) && fs.readFileSync(WEIGHTS_PATH, "utf8") === text;
  console.log(same ? "weights up to date" : "weights differ from the table: run npx tsx scripts/train-chat-intents.ts");
  process.exit(same ? 0 : 1);
}
fs.writeFileSync(WEIGHTS_PATH, text);
console.log(
  `${weights.examples} examples, ${weights.labels.length} intents, ${text.length} bytes, ${Date.now() - started} ms → ${WEIGHTS_PATH}`,
);
