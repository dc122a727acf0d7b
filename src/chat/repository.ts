import { and, asc, desc, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { chatConversations, chatMessages, docChunks } from "../db/schema.js";
import type { DocChunk } from "./docs.js";

export type ConversationRow = typeof chatConversations.$inferSelect;
export type MessageRow = typeof chatMessages.$inferSelect;

export interface Reference {
  type: "experiment" | "dataset" | "model" | "doc";
  id: string;
  title: string;
}

export interface DocHit extends DocChunk {
  rank: number;
}

/**
 * The only code that touches chat_conversations, chat_messages and doc_chunks. Every conversation read names its
 * owner and its workspace: a conversation is its asker's own, in the workspace it was asked in (its answers quote
 * that workspace's experiments), so another workspace's is not found.
 */
const mine = (workspaceId: string, userId: string) =>
  and(eq(chatConversations.workspaceId, workspaceId), eq(chatConversations.userId, userId));

export class ChatRepository {
  constructor(private readonly db: Db) {}

  async conversation(workspaceId: string, userId: string, id: string): Promise<ConversationRow | undefined> {
    const rows = await this.db
      .select()
      .from(chatConversations)
      .where(and(mine(workspaceId, userId), eq(chatConversations.id, id)));
    return rows[0];
  }

  async listConversations(workspaceId: string, userId: string, limit: number, offset: number) {
    const rows = await this.db
      .select({
        id: chatConversations.id,
        title: chatConversations.title,
        createdAt: chatConversations.createdAt,
        updatedAt: chatConversations.updatedAt,
        // Spelled out: drizzle leaves columns unqualified here, and a bare "id" would mean chat_messages.id.
        messages: sql<number>`(select count(*)::int from "chat_messages" m where m."conversation_id" = "chat_conversations"."id")`,
      })
      .from(chatConversations)
      .where(mine(workspaceId, userId))
      .orderBy(desc(chatConversations.updatedAt), desc(chatConversations.id))
      .limit(limit)
      .offset(offset);
    const [{ total }] = await this.db
      .select({ total: sql<number>`count(*)::int` })
      .from(chatConversations)
      .where(mine(workspaceId, userId));
    return { rows, total };
  }

  async deleteConversation(workspaceId: string, userId: string, id: string): Promise<boolean> {
    const rows = await this.db
      .delete(chatConversations)
      .where(and(mine(workspaceId, userId), eq(chatConversations.id, id)))
      .returning({ id: chatConversations.id });
    return rows.length > 0;
  }

  async messages(userId: string, conversationId: string, limit = 500): Promise<MessageRow[]> {
    return this.db
      .select()
      .from(chatMessages)
      .where(and(eq(chatMessages.userId, userId), eq(chatMessages.conversationId, conversationId)))
      .orderBy(asc(chatMessages.createdAt), asc(chatMessages.id))
      .limit(limit);
  }

  /** The last `n` messages, oldest first: the context a backend gets. */
  async recentMessages(userId: string, conversationId: string, n: number): Promise<MessageRow[]> {
    const rows = await this.db
      .select()
      .from(chatMessages)
      .where(and(eq(chatMessages.userId, userId), eq(chatMessages.conversationId, conversationId)))
      .orderBy(desc(chatMessages.createdAt))
      .limit(n);
    return rows.reverse();
  }

  /**
   * The user's question and the reply go in together, with the conversation when it is new, so a failed answer
   * leaves nothing behind and a conversation never holds half an exchange.
   */
  async saveExchange(
    workspaceId: string,
    userId: string,
    conversation: { id: string } | { title: string },
    question: string,
    reply: { content: string; refs: Reference[]; backend: string },
  ): Promise<{ conversationId: string; reply: MessageRow }> {
    return this.db.transaction(async (tx) => {
      const conversationId =
        "id" in conversation
          ? conversation.id
          : (await tx.insert(chatConversations).values({ userId, workspaceId, title: conversation.title }).returning())[0].id;
      await tx.insert(chatMessages).values({ userId, conversationId, role: "user", content: question });
      // clock_timestamp(), not now() (fixed for the transaction): created_at must order the question before the reply.
      const a = await tx
        .insert(chatMessages)
        .values({
          userId,
          conversationId,
          role: "assistant",
          content: reply.content,
          refs: reply.refs,
          backend: reply.backend,
          createdAt: sql`clock_timestamp()`,
        })
        .returning();
      await tx
        .update(chatConversations)
        .set({ updatedAt: sql`now()` })
        .where(and(eq(chatConversations.id, conversationId), eq(chatConversations.userId, userId)));
      return { conversationId, reply: a[0] };
    });
  }

  /** Stores this version of the docs once (several processes may race: the primary key keeps one copy). */
  async indexDocs(version: string, chunks: DocChunk[]): Promise<void> {
    const [{ n }] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(docChunks)
      .where(eq(docChunks.version, version));
    if (n < chunks.length) {
      for (let i = 0; i < chunks.length; i += 200) {
        const batch = chunks
          .slice(i, i + 200)
          .map((c) => ({ version, seq: c.seq, source: c.source, heading: c.heading, anchor: c.anchor, body: c.body }));
        await this.db.insert(docChunks).values(batch).onConflictDoNothing();
      }
    }
    // Older versions left by earlier deployments; a day's grace for processes still running them.
    await this.db.delete(docChunks).where(and(ne(docChunks.version, version), sql`${docChunks.createdAt} < now() - interval '1 day'`));
  }

  /** Postgres full-text search (websearch syntax, English stemming), best first. */
  async searchDocs(version: string, query: string, limit: number): Promise<DocHit[]> {
    const q = sql`websearch_to_tsquery('english', ${query})`;
    const rank = sql<number>`ts_rank(${docChunks.tsv}, ${q})`;
    const rows = await this.db
      .select({
        seq: docChunks.seq,
        source: docChunks.source,
        heading: docChunks.heading,
        anchor: docChunks.anchor,
        body: docChunks.body,
        rank,
      })
      .from(docChunks)
      .where(and(eq(docChunks.version, version), sql`${docChunks.tsv} @@ ${q}`))
      .orderBy(desc(rank), asc(docChunks.seq))
      .limit(limit);
    return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
  }
}
