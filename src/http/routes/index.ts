import type { AnyRoute } from "../route.js";
import { healthRoutes } from "./health.js";
import { apiKeyRoutes } from "./api-keys.js";
import { meRoutes } from "./me.js";
import { sessionRoutes } from "./session.js";
import { experimentRoutes } from "./experiments.js";
import { predictRoutes } from "./predict.js";
import { modelRoutes } from "./models.js";
import { approvalRoutes } from "./approval.js";
import { fileRoutes } from "./files.js";
import { datasetRoutes } from "./datasets.js";
import { chatRoutes } from "./chat.js";
import { accountRoutes } from "./account.js";
import { reportRoutes } from "./reports.js";
import { batchRoutes } from "./batches.js";
import { auditRoutes } from "./audit.js";
import { adminRoutes } from "./admin.js";
import { accountLinkRoutes } from "./account-links.js";
import { operationsRoutes } from "./operations.js";
import { pacsRoutes } from "./pacs.js";
import { inputCheckRoutes } from "./input-check.js";
import { pacsImportRoutes } from "./pacs-import.js";
import { monitoringRoutes } from "./monitoring.js";
import { monitoringAlertRoutes } from "./monitoring-alerts.js";
import { workspaceRoutes } from "./workspaces.js";

// Every HTTP route of Builder. Each area exports its list; OpenAPI is generated from this one array.
export function allRoutes(): AnyRoute[] {
  return [
    ...healthRoutes,
    ...meRoutes,
    ...sessionRoutes,
    ...accountRoutes,
    ...accountLinkRoutes,
    ...adminRoutes,
    ...operationsRoutes,
    ...apiKeyRoutes,
    ...workspaceRoutes,
    ...experimentRoutes,
    ...reportRoutes,
    ...fileRoutes,
    ...datasetRoutes,
    ...predictRoutes,
    ...modelRoutes,
    ...approvalRoutes,
    ...inputCheckRoutes,
    ...monitoringRoutes,
    ...monitoringAlertRoutes,
    ...batchRoutes,
    ...chatRoutes,
    ...auditRoutes,
    ...pacsRoutes,
    ...pacsImportRoutes,
  ];
}
