import OpenAI, { APIConnectionTimeoutError, APIUserAbortError } from "openai";
import type { ChatCompletionMessageParam, ChatCompletionMessageToolCall, ChatCompletionTool } from "openai/resources/chat/completions";
import { z } from "zod";
import { ApiError, msg } from "../errors.js";
import type { Logger } from "../logger.js";
import { uniqueReferences, type BackendReply, type BackendRequest, type ChatBackend } from "./backend.js";
import type { Reference } from "./repository.js";
import { SYSTEM_PROMPT } from "./safety.js";
import { toolDescriptions, toolSchemas, ToolArgumentError, type ToolName } from "./tools.js";

// Any OpenAI-compatible chat-completions server (vLLM, llama.cpp server, Ollama, a hosted service) through the
// official client: tool calling over the caller's tools, streaming, a time limit for the whole answer, the
// client's retries. Failures become 502 chat_backend_unavailable / 504 chat_backend_timeout, with the cause only
// in the server log: never the backend's address, key or error text in the answer.

export interface OpenAIBackendOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  logger: Logger;
}

/** Rounds of tool calls before the model must answer. */
const MAX_TOOL_ROUNDS = 6;
const HISTORY_MESSAGES = 12;

export const openAITools: ChatCompletionTool[] = (Object.keys(toolSchemas) as ToolName[]).map((name) => ({
  type: "function",
  function: { name, description: toolDescriptions[name], parameters: z.toJSONSchema(toolSchemas[name]) },
}));

type FunctionCall = Extract<ChatCompletionMessageToolCall, { type: "function" }>;

export class OpenAIBackend implements ChatBackend {
  readonly name = "openai" as const;
  private readonly client: OpenAI;

  constructor(private readonly opts: OpenAIBackendOptions) {
    // Local servers take any key; the client insists on one.
    this.client = new OpenAI({
      baseURL: opts.baseURL,
      apiKey: opts.apiKey || "not-needed",
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
    });
  }

  async answer(req: BackendRequest): Promise<BackendReply> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.opts.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    try {
      return await this.converse(req, signal);
    } catch (err) {
      throw this.toApiError(err, deadline.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
  }

  private async converse(req: BackendRequest, signal: AbortSignal): Promise<BackendReply> {
    const focus = req.experimentId
      ? `\nThe user has experiment ${req.experimentId} open; "it" or "this experiment" means experiment ${req.experimentId}.`
      : "";
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: SYSTEM_PROMPT + focus },
      ...req.history.slice(-HISTORY_MESSAGES).map((m) => ({ role: m.role, content: m.content })),
      { role: "user", content: req.message },
    ];
    const references: Reference[] = [];
    for (let round = 0; round <= MAX_TOOL_ROUNDS; round++) {
      const last = round === MAX_TOOL_ROUNDS;
      const { content, toolCalls } = req.onToken
        ? await this.streamed(messages, last, signal, req.onToken)
        : await this.whole(messages, last, signal);
      if (!toolCalls.length) return { reply: content, references: uniqueReferences(references) };
      messages.push({ role: "assistant", content: content || null, tool_calls: toolCalls });
      for (const call of toolCalls)
        messages.push({ role: "tool", tool_call_id: call.id, content: await this.runTool(req, call, references) });
    }
    throw new Error("the model kept calling tools");
  }

  /** A tool's result (or the reason its call was refused, so the model can correct itself) as the tool message. */
  private async runTool(req: BackendRequest, call: FunctionCall, references: Reference[]): Promise<string> {
    let args: unknown;
    try {
      args = call.function.arguments ? JSON.parse(call.function.arguments) : {};
    } catch {
      return JSON.stringify({ error: "the arguments were not valid JSON; call the tool again with a JSON object" });
    }
    try {
      const out = await req.tools.call(call.function.name, args);
      references.push(...out.references);
      return JSON.stringify(out.result);
    } catch (err) {
      if (err instanceof ToolArgumentError) return JSON.stringify({ error: `invalid call: ${err.message}` });
      throw err;
    }
  }

  private async whole(messages: ChatCompletionMessageParam[], last: boolean, signal: AbortSignal) {
    const completion = await this.client.chat.completions.create(
      { model: this.opts.model, messages, ...(last ? {} : { tools: openAITools }) },
      { signal },
    );
    const msg = completion.choices[0]?.message;
    const toolCalls = (msg?.tool_calls ?? []).filter((c): c is FunctionCall => c.type === "function");
    return { content: msg?.content ?? "", toolCalls };
  }

  private async streamed(messages: ChatCompletionMessageParam[], last: boolean, signal: AbortSignal, onToken: (t: string) => void) {
    const stream = await this.client.chat.completions.create(
      { model: this.opts.model, messages, stream: true, ...(last ? {} : { tools: openAITools }) },
      { signal },
    );
    let content = "";
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        onToken(delta.content);
      }
      // Tool calls arrive in pieces keyed by index: the id and name first, the arguments as string fragments.
      for (const tc of delta.tool_calls ?? []) {
        const slot = (calls[tc.index] ??= { id: "", name: "", arguments: "" });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        if (tc.function?.arguments) slot.arguments += tc.function.arguments;
      }
    }
    // The client's stream ends its loop quietly when the signal aborts (the caller left, or the time limit): what
    // arrived so far is a cut-off reply, not an answer, and must not be stored or used as one.
    if (signal.aborted) throw new APIUserAbortError();
    const toolCalls: FunctionCall[] = calls
      .filter(Boolean)
      .map((c, i) => ({ id: c.id || `call_${i}`, type: "function", function: { name: c.name, arguments: c.arguments } }));
    return { content, toolCalls };
  }

  private toApiError(err: unknown, timedOut: boolean): unknown {
    if (err instanceof ApiError) return err;
    if (timedOut || err instanceof APIConnectionTimeoutError) {
      this.opts.logger.warn({ err: describe(err) }, "chat backend timed out");
      return new ApiError(504, "chat_backend_timeout", msg("chat.backend_timeout", { seconds: Math.round(this.opts.timeoutMs / 1000) }));
    }
    if (err instanceof APIUserAbortError) return err; // the caller went away
    this.opts.logger.warn({ err: describe(err) }, "chat backend failed");
    return new ApiError(502, "chat_backend_unavailable", msg("chat.backend_unavailable"));
  }
}

/** What the log may keep of a backend error: its class, status and message (the client never puts the key in them). */
function describe(err: unknown) {
  const e = err as { name?: string; status?: number; message?: string };
  return { name: e?.name, status: e?.status, message: e?.message?.slice(0, 500) };
}
