import { and, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { files } from "../db/schema.js";

export type FileRow = typeof files.$inferSelect;

/** The only code that touches the files table: the record of each uploaded dataset file (the bytes are in the bucket). */
export class FileRepository {
  constructor(private readonly db: Db) {}

  /** Records an upload; uploading to the same path again replaces its record. */
  async record(userId: string, workspaceId: string, path: string, file: { size: number; sha256: string }): Promise<void> {
    await this.db
      .insert(files)
      .values({ userId, workspaceId, path, size: file.size, sha256: file.sha256 })
      .onConflictDoUpdate({ target: files.path, set: { size: file.size, sha256: file.sha256, createdAt: sql`now()` } });
  }

  /** The workspace's files, newest first. */
  list(workspaceId: string): Promise<FileRow[]> {
    return this.db.select().from(files).where(eq(files.workspaceId, workspaceId)).orderBy(desc(files.createdAt));
  }

  /** The workspace's file at `path`, or every file under it when it ends with a slash (a folder). */
  at(workspaceId: string, path: string): Promise<FileRow[]> {
    const folder = path.endsWith("/");
    return this.db
      .select()
      .from(files)
      .where(and(eq(files.workspaceId, workspaceId), folder ? sql`starts_with(${files.path}, ${path})` : eq(files.path, path)));
  }

  async delete(workspaceId: string, path: string): Promise<void> {
    await this.db.delete(files).where(and(eq(files.workspaceId, workspaceId), eq(files.path, path)));
  }
}
