import path from "node:path";
import type { Config } from "../config.js";
import type { ExperimentRow } from "./repository.js";

// Where an experiment's log lives: written by the job on the host that runs it, copied to the bucket when the
// experiment ends (so GET .../logs works when a worker on another host ran it), read by ExperimentService.

export const logFileOf = (config: Config, uuid: string) => path.join(config.dataDir, "logs", `${uuid}.log`);
/** Under the experiment's workspace's storage prefix (a personal workspace's is its owner's user id, as before). */
export const logObjectOf = (storagePrefix: string, row: Pick<ExperimentRow, "id" | "experimentId">) =>
  `logs/${storagePrefix}/${row.experimentId}/${row.id}.log`;
