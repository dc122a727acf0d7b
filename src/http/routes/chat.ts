import { z } from "zod";
import { ApiError, invalid } from "../../errors.js";
import { errorBody, toApiError } from "../errors.js";
import { preferredLanguage } from "../error-language.js";
import { abortWhenCallerLeaves, sendEvent, startEventStreamOnce, wantsEventStream } from "../event-stream.js";
import { defineRoute } from "../route.js";

const chatBody = z
  .object({
    message: z
      .string({ error: invalid("validation.string") })
      .max(8000, invalid("validation.at_most_chars", { max: 8000 }))
      .refine((s) => s.trim().length > 0, invalid("validation.not_blank")),
    conversation_id: z.string().uuid(invalid("validation.conversation_id_earlier")).optional(),
    experiment_id: z
      .number({ error: invalid("detail.positive_integer") })
      .int(invalid("detail.positive_integer"))
      .positive(invalid("detail.positive_integer"))
      .max(2_147_483_647)
      .optional(),
  })
  .strict();

const reference = z.object({ type: z.enum(["experiment", "dataset", "model", "doc"]), id: z.string(), title: z.string() });
const chatReply = z.object({
  reply: z.string(),
  conversation_id: z.string(),
  message_id: z.string(),
  references: z.array(reference),
  backend: z.enum(["builtin", "openai"]),
});
const conversationSummary = z.object({
  id: z.string(),
  title: z.string(),
  messages: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
const conversationList = z.object({
  data: z.array(conversationSummary),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
});
const storedMessage = z.object({
  id: z.string(),
  role: z.enum(["user", "assistant"]),
  content: z.string(),
  references: z.array(reference),
  backend: z.string().nullable(),
  created_at: z.string(),
});
const conversationDetail = conversationSummary.omit({ messages: true }).extend({ messages: z.array(storedMessage) });
const idParams = z.object({ conversation_id: z.string().uuid(invalid("validation.conversation_id")) });
const page = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), offset: z.coerce.number().int().min(0).default(0) });

export const chatRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/chat",
    auth: "any",
    scope: "read",
    summary: "Ask the assistant about your experiments, datasets, models and Builder itself",
    tags: ["chat"],
    body: chatBody,
    responses: {
      201: { description: "the reply, the conversation it belongs to and what it cited", schema: chatReply },
      200: {
        description:
          "with Accept: text/event-stream: `event: token` ({text}) pieces of the reply, then `event: done` with the 201 body; a failure after the first token is `event: error` with the error body",
        contentType: "text/event-stream",
      },
    },
    handler: async ({ services, auth, body, req, res }) => {
      const abort = abortWhenCallerLeaves(res);
      if (!wantsEventStream(req.get("accept"))) {
        try {
          return { status: 201, body: await services.chat.chat(auth, body, { signal: abort.signal }) };
        } catch (err) {
          if (abort.signal.aborted) return void res.end(); // the client left: nothing was stored, nobody to tell, no error to log
          throw err;
        }
      }
      const start = startEventStreamOnce(res);
      try {
        const answer = await services.chat.chat(auth, body, {
          signal: abort.signal,
          onToken: (text) => (start(), sendEvent(res, "token", { text })),
        });
        start();
        sendEvent(res, "done", answer);
      } catch (err) {
        if (!res.headersSent) throw err;
        if (abort.signal.aborted) return void res.end(); // the client left; nobody to tell
        if (!(err instanceof ApiError)) services.logger.error({ err }, "chat stream failed");
        sendEvent(res, "error", errorBody(toApiError(err), preferredLanguage(req.get("accept-language"))));
      }
      res.end();
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/chat/conversations",
    auth: "any",
    scope: "read",
    summary: "Your chat conversations, most recently active first",
    tags: ["chat"],
    query: page,
    responses: { 200: { description: "your conversations, newest activity first", schema: conversationList } },
    handler: async ({ services, auth, query }) => ({ body: await services.chat.listConversations(auth, query.limit, query.offset) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/chat/conversations/{conversation_id}",
    auth: "any",
    scope: "read",
    summary: "One of your conversations with its messages and their references",
    tags: ["chat"],
    params: idParams,
    responses: { 200: { description: "the conversation and its messages, oldest first", schema: conversationDetail } },
    handler: async ({ services, auth, params }) => ({ body: await services.chat.conversation(auth, params.conversation_id) }),
  }),
  defineRoute({
    method: "delete",
    path: "/v1/chat/conversations/{conversation_id}",
    auth: "any",
    scope: "build",
    summary: "Delete one of your conversations and its messages",
    tags: ["chat"],
    params: idParams,
    responses: { 204: { description: "deleted" } },
    handler: async ({ services, auth, params }) => {
      await services.chat.deleteConversation(auth, params.conversation_id);
      return { status: 204 };
    },
  }),
];
