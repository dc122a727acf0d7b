import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { B_SECRETS, seedTwoUsers } from "./chat-fixtures.js";
import { HELD_OUT, QUESTIONS, type Question } from "./chat-questions.js";

// The builtin backend (no LLM, no network) against the fixed question set over a seeded account, through the real
// HTTP route. Prints the pass rate; the target is at least 90 %.

let server: TestServer;
let a: UserWithKey;
let b: UserWithKey;

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
  return { wrong, leaks };
}

beforeAll(async () => {
  server = await startTestServer(primaryTarget());
  ({ a, b } = await seedTwoUsers(server));
}, 120_000);

afterAll(async () => {
  await server?.teardown();
});

/** Asks every question as user A; returns the failures (what was wrong and the reply) and the leaks. */
async function runSet(questions: Question[]): Promise<{ failures: string[]; leaks: string[] }> {
  const failures: string[] = [];
  const leaks: string[] = [];
  for (const q of questions) {
    let conversation: string | undefined;
    if (q.followUp) conversation = (await ask(a, { message: q.followUp })).conversation_id;
    const answer = await ask(a, {
      message: q.q,
      ...(conversation ? { conversation_id: conversation } : {}),
      ...(q.experiment_id ? { experiment_id: q.experiment_id } : {}),
    });
    const judged = judge(q, answer, b.userId);
    const problems = [...judged.wrong, ...judged.leaks];
    leaks.push(...judged.leaks.map((l) => `${q.q}: ${l}`));
    if (problems.length)
      failures.push(`✗ ${q.q}\n    ${problems.join("; ")}\n    reply: ${answer.reply.replace(/\n/g, "\n           ").slice(0, 1500)}`);
  }
  return { failures, leaks };
}

function report(name: string, questions: Question[], failures: string[]): number {
  const passed = questions.length - failures.length;
  const rate = passed / questions.length;
  console.log(
    `builtin chat ${name}: ${passed}/${questions.length} passed (${(rate * 100).toFixed(1)} %)${failures.length ? `\n${failures.join("\n")}` : ""}`,
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

  it("answers the other user from their own data only, for the same experiment number", async () => {
    const answer = await ask(b, { message: "How is experiment 42 doing?" });
    expect(answer.reply).toContain("AUC 0.555");
    expect(answer.reply).not.toContain("0.912");
    expect(answer.reply).not.toContain(a.userId);
  });
});
