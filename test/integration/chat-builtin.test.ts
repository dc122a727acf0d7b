import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { B_SECRETS, seedClinic, seedTwoUsers } from "./chat-fixtures.js";
import { HELD_OUT, QUESTIONS, type Question } from "./chat-questions.js";
import { CLINIC_QUESTIONS } from "./chat-questions-clinic.js";
import { CLINIC_HELD_OUT } from "./chat-questions-held-out.js";
import { CLINIC_FRESH } from "./chat-questions-fresh.js";
import { CLINIC_POST_FREEZE } from "./chat-questions-post-freeze.js";
import { CLINIC_LEAD } from "./chat-questions-lead.js";

// The builtin backend (no LLM, no network) against the fixed question set over a seeded account, through the real
// HTTP route. Prints the pass rate; the target is at least 90 %.

let server: TestServer;
let a: UserWithKey;
let b: UserWithKey;
let c: UserWithKey;

interface Answer {
  reply: string;
  conversation_id: string;
  references: Array<{ type: string; id: string; title: string }>;
  backend: string;
}

async function ask(user: UserWithKey, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${server.url}/v1/chat`, {
    method: "POST",
    headers: bearer(user.key, { "content-type": "application/json" }),
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Answer;
}

/** The reply's own prose: no code blocks, code spans (user data, identifiers) or quoted documentation. */
const prose = (reply: string) =>
  reply
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/`[^`]*`/g, " ")
    .split("\n")
    .filter((l) => !l.startsWith(">"))
    .join("\n");

// A handful of function words each language cannot do without; the checker's own, independent of the chat's.
const EN_WORDS = new Set(["the", "is", "your", "of", "and", "with", "it", "on", "to", "was", "you", "this", "not", "for"]);
const ES_WORDS = new Set(["el", "la", "es", "tu", "de", "y", "con", "en", "los", "las", "que", "no", "para", "un", "una", "del"]);
export function replyLanguage(reply: string): "en" | "es" {
  const words = prose(reply)
    .toLowerCase()
    .split(/[^a-záéíóúñü]+/);
  const en = words.filter((w) => EN_WORDS.has(w)).length;
  const es = words.filter((w) => ES_WORDS.has(w)).length;
  return es > en ? "es" : "en";
}

/** What is wrong with one answer: `wrong` (a fact missing or unwanted) and `leaks` (the other user's data). */
function judge(q: Question, answer: Answer, otherUserId: string): { wrong: string[]; leaks: string[] } {
  const text = answer.reply.toLowerCase();
  const wrong: string[] = [];
  const leaks: string[] = [];
  for (const m of q.must) if (!text.includes(m.toLowerCase())) wrong.push(`missing "${m}"`);
  for (const m of q.mustNot ?? []) if (text.includes(m.toLowerCase())) wrong.push(`contains "${m}"`);
  for (const m of [...B_SECRETS, otherUserId]) if (text.includes(m.toLowerCase())) leaks.push(`contains the other user's "${m}"`);
  const refs = JSON.stringify(answer.references);
  for (const m of [...B_SECRETS, otherUserId]) if (refs.includes(m)) leaks.push(`a reference contains the other user's "${m}"`);
  const cited = (r: Answer["references"][number]) =>
    q.cites!.startsWith("doc:#") ? r.type === "doc" && r.id.endsWith(q.cites!.slice(4)) : `${r.type}:${r.id}`.startsWith(q.cites!);
  if (q.cites && !answer.references.some(cited)) wrong.push(`does not cite ${q.cites}`);
  if (answer.backend !== "builtin") wrong.push(`backend ${answer.backend}`);
  if (q.lang && replyLanguage(answer.reply) !== q.lang) wrong.push(`not in ${q.lang}`);
  const words = prose(answer.reply).split(/\s+/).filter(Boolean).length;
  if (q.maxWords && words > q.maxWords) wrong.push(`${words} words (at most ${q.maxWords})`);
  return { wrong, leaks };
}

/** Issue 39: about 120 words unless asked for more; a little slack for names and intervals. */
const MAX_WORDS = 140;

beforeAll(async () => {
  server = await startTestServer(primaryTarget());
  ({ a, b } = await seedTwoUsers(server));
  c = await seedClinic(server);
}, 120_000);

afterAll(async () => {
  await server?.teardown();
});

/** Asks every question as user A; returns the failures (what was wrong and the reply) and the leaks. */
async function runSet(questions: Question[], user: UserWithKey = a, maxWords?: number): Promise<{ failures: string[]; leaks: string[] }> {
  const failures: string[] = [];
  const leaks: string[] = [];
  for (const q of questions) {
    let conversation: string | undefined;
    if (q.followUp) conversation = (await ask(user, { message: q.followUp })).conversation_id;
    const answer = await ask(user, {
      message: q.q,
      ...(conversation ? { conversation_id: conversation } : {}),
      ...(q.experiment_id ? { experiment_id: q.experiment_id } : {}),
    });
    const judged = judge({ maxWords, ...q }, answer, b.userId);
    // CHAT_PRINT_REPLIES=1 prints every reply, to read them as a clinician would.
    if (process.env.CHAT_PRINT_REPLIES) console.log(`\n### ${q.q}\n${answer.reply}`);
    const problems = [...judged.wrong, ...judged.leaks];
    leaks.push(...judged.leaks.map((l) => `${q.q}: ${l}`));
    if (problems.length)
      failures.push(`✗ ${q.q}\n    ${problems.join("; ")}\n    reply: ${answer.reply.replace(/\n/g, "\n           ").slice(0, 1500)}`);
  }
  return { failures, leaks };
}

/** The pass count of the questions in one language (a question without `lang` is English). */
function perLanguage(questions: Question[], failures: string[], lang: "en" | "es"): string {
  const mine = questions.filter((q) => (q.lang ?? "en") === lang);
  const failed = mine.filter((q) => failures.some((f) => f.startsWith(`✗ ${q.q}\n`))).length;
  return `${lang} ${mine.length - failed}/${mine.length}`;
}

function report(name: string, questions: Question[], failures: string[]): number {
  const passed = questions.length - failures.length;
  const rate = passed / questions.length;
  const langs = `${perLanguage(questions, failures, "es")}, ${perLanguage(questions, failures, "en")}`;
  console.log(
    `builtin chat ${name}: ${passed}/${questions.length} passed (${(rate * 100).toFixed(1)} %; ${langs})${failures.length ? `\n${failures.join("\n")}` : ""}`,
  );
  return rate;
}

describe("builtin chat: the fixed question set", () => {
  it("answers at least 90 % of the questions with the right facts and none of the other user's", async () => {
    expect(QUESTIONS.length).toBeGreaterThanOrEqual(40);
    const { failures, leaks } = await runSet(QUESTIONS);
    const rate = report("question set", QUESTIONS, failures);
    expect(leaks).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.9);
  }, 300_000);

  it("prints how it does on held-out paraphrases, and never leaks the other user's data in them", async () => {
    const { failures, leaks } = await runSet(HELD_OUT);
    // Missing facts here are measured, not asserted; a leak is a failure whatever the wording.
    report("held-out paraphrases", HELD_OUT, failures);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("answers the clinic's questions (names, descriptions, Spanish, misspellings, limits) in their language", async () => {
    expect(CLINIC_QUESTIONS.length + QUESTIONS.length).toBeGreaterThanOrEqual(150);
    const spanish = CLINIC_QUESTIONS.filter((q) => q.lang === "es").length;
    expect(spanish * 2).toBeGreaterThanOrEqual(CLINIC_QUESTIONS.length + QUESTIONS.length);
    const { failures, leaks } = await runSet(CLINIC_QUESTIONS, c, MAX_WORDS);
    const rate = report("clinic questions", CLINIC_QUESTIONS, failures);
    expect(leaks).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.9);
  }, 300_000);

  it("prints how it does on the held-out clinic questions (issue 39), and never leaks in them", async () => {
    const { failures, leaks } = await runSet(CLINIC_HELD_OUT, c, MAX_WORDS);
    report("held-out clinic questions", CLINIC_HELD_OUT, failures);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("prints how it does on questions written after the code was frozen (issue 39), and never leaks in them", async () => {
    const { failures, leaks } = await runSet(CLINIC_POST_FREEZE, c, MAX_WORDS);
    report("post-freeze clinic questions", CLINIC_POST_FREEZE, failures);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("prints how it does on the fresh held-out set of issue 53 (never trained on), and never leaks in it", async () => {
    const { failures, leaks } = await runSet(CLINIC_FRESH, c, MAX_WORDS);
    report("fresh held-out clinic questions (issue 53)", CLINIC_FRESH, failures);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("prints how it does on the lead's set written after issue 53's change (never tuned on), and never leaks in it", async () => {
    const { failures, leaks } = await runSet(CLINIC_LEAD, c, MAX_WORDS);
    report("lead's clinic questions after issue 53", CLINIC_LEAD, failures);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("answers issue 49's monitoring question from the monitoring report of the model it names, saying plainly there is no traffic yet", async () => {
    const es = await ask(c, { message: "¿cómo va el modelo de neumonía este mes?" });
    expect(es.reply).toContain("Experimento 6");
    expect(es.reply).toContain("Aún no hay predicciones registradas");
    expect(es.reply).not.toContain("0.901");
    const en = await ask(c, { message: "how is the diabetes model doing this month?" });
    expect(en.reply).toContain("Experiment 2");
    expect(en.reply).toContain("No predictions recorded yet");
    // Two breast models: the resolver asks which one instead of answering about either.
    const both = await ask(c, { message: "¿cómo va el modelo de mama este mes?" });
    expect(both.reply).toContain("experimento 1");
    expect(both.reply).toContain("experimento 3");
    expect(both.reply).not.toContain("predicciones registradas");
  });

  it("answers the other user from their own data only, for the same experiment number", async () => {
    const answer = await ask(b, { message: "How is experiment 42 doing?" });
    expect(answer.reply).toContain("AUC 0.555");
    expect(answer.reply).not.toContain("0.912");
    expect(answer.reply).not.toContain(a.userId);
  });
});
