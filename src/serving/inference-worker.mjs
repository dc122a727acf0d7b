// Bootstrap for session.ts inference workers: register tsx so the TypeScript worker body can be imported.
import { register } from "tsx/esm/api";

register();
await import("./inference-worker.ts");
