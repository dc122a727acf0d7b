import { chunkDocs, docsVersion, readDocs, REPO_ROOT, type DocFile } from "./docs.js";
import { parseGlossary, type Glossary } from "./glossary.js";
import type { ChatRepository, DocHit } from "./repository.js";

/**
 * The documentation, indexed once at start-up in the database's full-text index (doc_chunks), and the glossary
 * parsed from its tables. Searches first ask for every word (websearch syntax); when nothing has them all, for any.
 */
export class DocsIndex {
  private constructor(
    readonly version: string,
    readonly glossary: Glossary,
    readonly chunkCount: number,
    private readonly repo: ChatRepository,
  ) {}

  static async build(repo: ChatRepository, files: DocFile[] = readDocs(REPO_ROOT)): Promise<DocsIndex> {
    const version = docsVersion(files);
    const chunks = chunkDocs(files);
    await repo.indexDocs(version, chunks);
    return new DocsIndex(version, parseGlossary(files), chunks.length, repo);
  }

  async search(query: string, limit = 3): Promise<DocHit[]> {
    const cleaned = query
      .replace(/[^\p{L}\p{N}_\s-]/gu, " ")
      .replace(/(^|\s)-+/g, "$1")
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, 500);
    if (!cleaned) return [];
    const all = await this.repo.searchDocs(this.version, cleaned, limit);
    if (all.length >= limit) return all;
    // A question in plain words rarely has every word in one section: fill up with sections that have any of them.
    // websearch_to_tsquery reads a bare "or" as OR; stop words (how, do, I) are dropped by the english config.
    const words = cleaned.split(" ").filter((w) => w.length > 1 && !/^(or|and|not)$/i.test(w));
    if (words.length < 2) return all;
    const any = await this.repo.searchDocs(this.version, words.join(" or "), limit);
    const seen = new Set(all.map((h) => h.seq));
    return [...all, ...any.filter((h) => !seen.has(h.seq))].slice(0, limit);
  }
}
