import type { Reference } from "./repository.js";
import type { ChatTools } from "./tools.js";

/** One earlier message of the conversation, as a backend sees it. */
export interface PastMessage {
  role: "user" | "assistant";
  content: string;
}

export interface BackendRequest {
  message: string;
  history: PastMessage[];
  /** The experiment the caller focused the chat on (experiment_id in the request), if any. */
  experimentId?: number;
  /** Tools already bound to the caller. */
  tools: ChatTools;
  /** Called with each piece of the reply as it is produced (streaming); the whole reply is still returned. */
  onToken?: (text: string) => void;
  signal?: AbortSignal;
}

export interface BackendReply {
  reply: string;
  references: Reference[];
}

export interface ChatBackend {
  readonly name: "builtin" | "openai";
  answer(req: BackendRequest): Promise<BackendReply>;
}

/** References in first-cited order, each once. */
export function uniqueReferences(refs: Reference[]): Reference[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const key = `${r.type}:${r.id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
