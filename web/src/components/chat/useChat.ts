import { useCallback, useEffect, useRef, useState } from "react";
import { ApiFailure, postEventStream } from "../../api/client";
import { call } from "../../api/typed";
import type { ChatReference, ChatReply, ChatRequest } from "../../api/types";

export interface ChatMessage {
  /** A stored message's id; a local key for the question and the reply still streaming. */
  key: string;
  role: "user" | "assistant";
  content: string;
  references: ChatReference[];
  streaming?: boolean;
}

/** The conversation on screen, kept for this tab so a reload (the panel stays open) shows it again. */
const CONVERSATION_KEY = "builder.chat.conversation";
const remembered = () => sessionStorage.getItem(CONVERSATION_KEY);
function remember(id: string | null) {
  if (id) sessionStorage.setItem(CONVERSATION_KEY, id);
  else sessionStorage.removeItem(CONVERSATION_KEY);
}

let localKeys = 0;
const localKey = () => `local-${++localKeys}`;

/**
 * One conversation in the panel: its messages, the question being answered (streamed token by token) and the
 * conversation id the server gave it. Switching conversation, or closing, cancels an answer still streaming.
 */
export function useChat(experimentId: number | undefined, onSaved: () => void) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const inFlight = useRef<AbortController | null>(null);

  const cancel = useCallback(() => {
    inFlight.current?.abort();
    inFlight.current = null;
    setStreaming(false);
  }, []);
  useEffect(() => cancel, [cancel]);

  const startNew = useCallback(() => {
    cancel();
    setMessages([]);
    setConversationId(null);
    remember(null);
    setError(null);
  }, [cancel]);

  const open = useCallback(
    async (id: string, quiet = false) => {
      cancel();
      setError(null);
      try {
        const c = await call("get", "/v1/chat/conversations/{conversation_id}", { path: { conversation_id: id } });
        setConversationId(c.id);
        remember(c.id);
        setMessages(c.messages.map((m) => ({ key: m.id, role: m.role, content: m.content, references: m.references })));
      } catch (err) {
        // A remembered conversation may be gone (deleted in another tab, another user signed in): start afresh.
        if (quiet) remember(null);
        else setError(err);
      }
    },
    [cancel],
  );

  useEffect(() => {
    const id = remembered();
    if (id) void open(id, true);
  }, [open]);

  const send = useCallback(
    async (text: string): Promise<boolean> => {
      cancel();
      const controller = new AbortController();
      inFlight.current = controller;
      const questionKey = localKey();
      const replyKey = localKey();
      const patchReply = (patch: (m: ChatMessage) => ChatMessage) =>
        setMessages((ms) => ms.map((m) => (m.key === replyKey ? patch(m) : m)));
      setError(null);
      setStreaming(true);
      setMessages((ms) => [
        ...ms,
        { key: questionKey, role: "user", content: text, references: [] },
        { key: replyKey, role: "assistant", content: "", references: [], streaming: true },
      ]);
      const body: ChatRequest = {
        message: text,
        ...(conversationId ? { conversation_id: conversationId } : {}),
        ...(experimentId ? { experiment_id: experimentId } : {}),
      };
      try {
        let done: ChatReply | null = null;
        await postEventStream(
          "/v1/chat",
          body,
          ({ event, data }) => {
            if (event === "token") patchReply((m) => ({ ...m, content: m.content + (data as { text: string }).text }));
            else if (event === "done") done = data as ChatReply;
            else if (event === "error") {
              const e = (data as { error: { code: string; message: string } }).error;
              throw new ApiFailure(0, e.code, e.message, null);
            }
          },
          controller.signal,
        );
        if (!done) throw new ApiFailure(0, "stream_ended", "the answer stopped before it was complete", null);
        const reply: ChatReply = done;
        setConversationId(reply.conversation_id);
        remember(reply.conversation_id);
        patchReply((m) => ({ ...m, key: reply.message_id, content: reply.reply, references: reply.references, streaming: false }));
        onSaved();
        return true;
      } catch (err) {
        // Nothing is stored when an answer fails or is cancelled: both go, and the composer gets the question back.
        setMessages((ms) => ms.filter((m) => m.key !== replyKey && m.key !== questionKey));
        if (!controller.signal.aborted) setError(err);
        return false;
      } finally {
        if (inFlight.current === controller) {
          inFlight.current = null;
          setStreaming(false);
        }
      }
    },
    [cancel, conversationId, experimentId, onSaved],
  );

  return { messages, conversationId, streaming, error, send, open, startNew, cancel };
}
