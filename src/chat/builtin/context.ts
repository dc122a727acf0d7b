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
  /** The message corrected and put into English (understand.ts): what the patterns read. */
  text: string;
  /** The caller's experiments, newest first. */
  all: Candidate[];
}
