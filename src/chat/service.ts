import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { ApiError, msg } from "../errors.js";
import type { Logger } from "../logger.js";
import type { BackendReply, ChatBackend, PastMessage } from "./backend.js";
import { BuiltinBackend } from "./builtin/index.js";
import { noDiagnosisReply } from "./diagnosis.js";
import { experimentNumbers } from "./builtin/slots.js";
import { conversationLanguage, detectLanguage } from "./language.js";
import type { MonitoringReader } from "./monitoring-summary.js";
import { DocsIndex } from "./docs-index.js";
import { OpenAIBackend } from "./openai-backend.js";
import { ChatReads } from "./reads.js";
import { ChatRepository, type Reference } from "./repository.js";
import { asksForDiagnosis } from "./safety.js";
import { ChatTools } from "./tools.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

export interface ChatInput {
  message: string;
  conversation_id?: string;
  experiment_id?: number;
}

export interface ChatAnswer {
  reply: string;
  conversation_id: string;
  message_id: string;
  references: Reference[];
  backend: ChatBackend["name"];
}

const HISTORY = 12;

/** The chat assistant: checks what the caller may see, picks the answer's source, and stores the exchange. */
export class ChatService {
  private constructor(
    private readonly deps: {
      repo: ChatRepository;
      /** One per process: it keeps each model version's manifest (without codes) once read. */
      reads: ChatReads;
      docs: DocsIndex;
      backend: ChatBackend;
      publicUrl: string;
      budgets: { fast: number; best: number };
      monitoring?: MonitoringReader;
    },
  ) {}

  static async create(opts: { config: Config; db: Db; logger: Logger; monitoring?: MonitoringReader }): Promise<ChatService> {
    const repo = new ChatRepository(opts.db);
    const docs = await DocsIndex.build(repo);
    const c = opts.config;
    const backend: ChatBackend =
      c.CHAT_BACKEND === "openai"
        ? new OpenAIBackend({
            baseURL: c.CHAT_BASE_URL!,
            apiKey: c.CHAT_API_KEY,
            model: c.CHAT_MODEL,
            timeoutMs: c.CHAT_TIMEOUT_MS,
            maxRetries: c.CHAT_MAX_RETRIES,
            logger: opts.logger,
          })
        : new BuiltinBackend(docs.glossary);
    opts.logger.debug({ backend: backend.name, docChunks: docs.chunkCount, docsVersion: docs.version }, "chat ready");
    const publicUrl = c.PUBLIC_URL ?? `http://localhost:${c.PORT}`;
    const budgets = { fast: c.FAST_BUDGET_S, best: c.BEST_BUDGET_S };
    return new ChatService({ repo, reads: new ChatReads(opts.db), docs, backend, publicUrl, budgets, monitoring: opts.monitoring });
  }

  get backendName(): ChatBackend["name"] {
    return this.deps.backend.name;
  }

  /** Tools bound to one user in one workspace: the only way any backend reaches data. */
  toolsFor(scope: Scope): ChatTools {
    return new ChatTools(scope, {
      reads: this.deps.reads,
      docs: this.deps.docs,
      publicUrl: this.deps.publicUrl,
      budgets: this.deps.budgets,
      monitoring: this.deps.monitoring,
    });
  }

  async chat(scope: Scope, input: ChatInput, opts: { onToken?: (t: string) => void; signal?: AbortSignal } = {}): Promise<ChatAnswer> {
    const { repo } = this.deps;
    const { userId, workspace } = scope;
    assertAllowed(workspace, "experiment.read");
    let history: PastMessage[] = [];
    if (input.conversation_id) {
      if (!(await repo.conversation(workspace.id, userId, input.conversation_id)))
        throw new ApiError(404, "not_found", msg("chat.conversation_not_found"));
      history = (await repo.recentMessages(userId, input.conversation_id, HISTORY)).map((m) => ({
        role: m.role as PastMessage["role"],
        content: m.content,
      }));
    }
    if (input.experiment_id !== undefined && !(await this.deps.reads.hasExperiment(workspace.id, input.experiment_id))) {
      throw new ApiError(404, "not_found", msg("experiment.not_found", { id: input.experiment_id }));
    }
    const tools = this.toolsFor(scope);
    let answer: BackendReply;
    let backend = this.deps.backend.name;
    if (asksForDiagnosis(input.message)) {
      // Decided here, for every backend: a request for a diagnosis never reaches an LLM.
      const lang = detectLanguage(input.message, conversationLanguage(history));
      answer = await noDiagnosisReply(tools, input.experiment_id ?? experimentNumbers(input.message)[0], lang, {
        message: input.message,
        known: this.deps.docs.glossary.words,
      });
      backend = "builtin";
      if (opts.onToken) for (const piece of answer.reply.match(/\S+\s*|\s+/g) ?? []) opts.onToken(piece);
    } else {
      answer = await this.deps.backend.answer({
        message: input.message,
        history,
        experimentId: input.experiment_id,
        tools,
        onToken: opts.onToken,
        signal: opts.signal,
      });
    }
    // A caller who left gets nothing stored: a backend stopped by the abort may have returned a partial reply.
    if (opts.signal?.aborted) throw new ChatAbortedError();
    const reply = answer.reply.trim() || "I have no answer to that.";
    const conversation = input.conversation_id ? { id: input.conversation_id } : { title: titleOf(input.message) };
    const saved = await repo.saveExchange(workspace.id, userId, conversation, input.message, {
      content: reply,
      refs: answer.references,
      backend,
    });
    return { reply, conversation_id: saved.conversationId, message_id: saved.reply.id, references: answer.references, backend };
  }

  async listConversations(scope: Scope, limit: number, offset: number) {
    const { rows, total } = await this.deps.repo.listConversations(scope.workspace.id, scope.userId, limit, offset);
    return {
      data: rows.map((r) => ({ id: r.id, title: r.title, messages: r.messages, created_at: r.createdAt, updated_at: r.updatedAt })),
      total,
      limit,
      offset,
      has_more: offset + rows.length < total,
    };
  }

  async conversation(scope: Scope, id: string) {
    const conv = await this.deps.repo.conversation(scope.workspace.id, scope.userId, id);
    if (!conv) throw new ApiError(404, "not_found", msg("chat.conversation_not_found"));
    const messages = await this.deps.repo.messages(scope.userId, id);
    return {
      id: conv.id,
      title: conv.title,
      created_at: conv.createdAt,
      updated_at: conv.updatedAt,
      messages: messages.map((m) => ({
        id: m.id,
        role: m.role,
        content: m.content,
        references: m.refs,
        backend: m.backend,
        created_at: m.createdAt,
      })),
    };
  }

  async deleteConversation(scope: Scope, id: string): Promise<void> {
    if (!(await this.deps.repo.deleteConversation(scope.workspace.id, scope.userId, id)))
      throw new ApiError(404, "not_found", msg("chat.conversation_not_found"));
  }
}

/** The caller went away before the answer was complete; nothing was stored. */
export class ChatAbortedError extends Error {
  constructor() {
    super("the chat request was aborted by its caller");
  }
}

function titleOf(message: string): string {
  const oneLine = message.replace(/\s+/g, " ").trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine;
}
