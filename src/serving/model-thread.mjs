// Bootstrap for a model's threads (model-threads.ts): register tsx so the TypeScript worker body can be imported.
import { register } from "tsx/esm/api";

register();
await import("./model-thread.ts");
