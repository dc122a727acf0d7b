import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import type { ChatReference } from "../../api/types";
import { ErrorBox, Link } from "../ui";
import { ConversationList } from "./ConversationList";
import { ReplyText } from "./ReplyText";
import { useChat, type ChatMessage } from "./useChat";

/** What a reply cited: the user's experiments and models open their page; documentation and datasets are named. */
function References({ refs }: { refs: ChatReference[] }) {
  const { t } = useTranslation("chat");
  if (refs.length === 0) return null;
  const seen = new Set<string>();
  const unique = refs.filter((r) => {
    const k = `${r.type}:${r.id}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
  return (
    <div className="chat-refs small">
      <span className="muted">{t("message.sources")}</span>{" "}
      {unique.map((r, i) => (
        <span key={`${r.type}:${r.id}`}>
          {i > 0 && ", "}
          {(r.type === "experiment" || r.type === "model") && /^\d+$/.test(r.id) ? (
            <Link to={`/experiments/${r.id}`}>{r.title}</Link>
          ) : (
            r.title
          )}
        </span>
      ))}
    </div>
  );
}

function Message({ m }: { m: ChatMessage }) {
  const { t } = useTranslation("chat");
  return (
    <div className={`chat-msg ${m.role}`} data-testid={`chat-${m.role}`} aria-busy={m.streaming || undefined}>
      <span className="chat-who">{m.role === "user" ? t("message.you") : t("message.assistant")}</span>
      {m.role === "user" ? (
        <p className="chat-question">{m.content}</p>
      ) : m.content ? (
        <ReplyText text={m.content} />
      ) : (
        <p className="muted">{t("message.thinking")}</p>
      )}
      {!m.streaming && <References refs={m.references} />}
    </div>
  );
}

/**
 * The chat panel's content: the conversation (or the list of them), and the question box. It knows the page's
 * experiment and sends it with every question, so "this model" means the one on screen.
 */
export function ChatPanel({
  experimentId,
  openedAt,
  onClose,
}: {
  experimentId: number | undefined;
  /** When the user last opened the panel (0: restored open on page load, which keeps focus on the page). */
  openedAt: number;
  onClose: () => void;
}) {
  const { t } = useTranslation("chat");
  const [version, setVersion] = useState(0);
  const onSaved = useCallback(() => setVersion((v) => v + 1), []);
  const chat = useChat(experimentId, onSaved);
  const [view, setView] = useState<"chat" | "list">("chat");
  const [draft, setDraft] = useState("");
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (openedAt) input.current?.focus();
  }, [openedAt]);
  // Follow the answer as it streams in, unless the user scrolled up to read (decided before the new text came).
  const following = useRef(true);
  useEffect(() => {
    if (following.current && log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [chat.messages, view]);

  const submit = async () => {
    const text = draft.trim();
    if (!text || chat.streaming) return;
    setDraft("");
    following.current = true;
    if (!(await chat.send(text))) setDraft((d) => d || text);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends, Shift+Enter starts a new line (as in every chat); not while an input method is composing.
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    <>
      <div className="chat-head">
        <h2 id="chat-title">{t("title")}</h2>
        <button type="button" className="secondary small" onClick={onClose} aria-label={t("close")}>
          ✕
        </button>
      </div>
      <div className="chat-tools">
        <button
          type="button"
          className="secondary small"
          aria-pressed={view === "list"}
          onClick={() => setView((v) => (v === "list" ? "chat" : "list"))}
        >
          {t("conversations")}
        </button>
        <button
          type="button"
          className="secondary small"
          onClick={() => {
            chat.startNew();
            setView("chat");
            requestAnimationFrame(() => input.current?.focus());
          }}
        >
          {t("new")}
        </button>
      </div>
      <p className="chat-context small muted" data-testid="chat-context">
        {experimentId ? t("context.experiment", { id: experimentId }) : t("context.none")}
      </p>
      {view === "list" ? (
        <div className="chat-body">
          <ConversationList
            current={chat.conversationId}
            version={version}
            onOpen={(id) => {
              void chat.open(id);
              setView("chat");
              requestAnimationFrame(() => input.current?.focus());
            }}
            onDeleted={(id) => {
              if (id === chat.conversationId) chat.startNew();
            }}
          />
        </div>
      ) : (
        <>
          <div
            className="chat-body chat-log"
            ref={log}
            role="log"
            aria-live="polite"
            aria-label={t("logLabel")}
            tabIndex={0}
            onScroll={(e) => {
              const el = e.currentTarget;
              following.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
            }}
          >
            {chat.messages.length === 0 && <p className="muted">{experimentId ? t("hint.experiment") : t("hint.general")}</p>}
            {chat.messages.map((m) => (
              <Message key={m.key} m={m} />
            ))}
          </div>
          {chat.error ? <ErrorBox error={chat.error} title={t("error")} /> : null}
          <form
            className="chat-compose"
            onSubmit={(e) => {
              e.preventDefault();
              void submit();
            }}
          >
            <label className="visually-hidden" htmlFor="chat-input">
              {t("input.label")}
            </label>
            <textarea
              id="chat-input"
              ref={input}
              rows={2}
              maxLength={8000}
              value={draft}
              placeholder={t("input.placeholder")}
              aria-describedby="chat-input-help"
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onKeyDown}
            />
            <span id="chat-input-help" className="visually-hidden">
              {t("input.help")}
            </span>
            {chat.streaming ? (
              <button type="button" className="secondary" onClick={chat.cancel}>
                {t("stop")}
              </button>
            ) : (
              <button type="submit" disabled={!draft.trim()}>
                {t("send")}
              </button>
            )}
          </form>
        </>
      )}
    </>
  );
}
