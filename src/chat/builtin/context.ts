import type { BackendRequest } from "../backend.js";
import type { Glossary } from "../glossary.js";
import type { Lang } from "../language.js";
import type { Candidate } from "../resolve.js";
import type { ChatTools } from "../tools.js";

/** What every reply function of the builtin gets: the request, its tools, the reply's language and the message as read. */
export interface ReplyContext {
  req: BackendRequest;
  tools: ChatTools;
  glossary: Glossary;
  lang: Lang;
  /** The message as written, its first characters only (index.ts MAX_READ): what the slot extractors read. */
  text: string;
  /** Words that name nothing of the user's (the docs' and the example questions'): the resolver leaves them alone. */
  known: ReadonlySet<string>;
  /** The caller's experiments, newest first. */
  all: Candidate[];
}
