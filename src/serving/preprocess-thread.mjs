// Bootstrap for preprocess-pool.ts threads: register tsx so the TypeScript worker body can be imported.
import { register } from "tsx/esm/api";

register();
await import("./preprocess-thread.ts");
