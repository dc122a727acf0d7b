import type { AnyRoute } from "../route.js";
import { healthRoutes } from "./health.js";
import { meRoutes } from "./me.js";

// Every HTTP route of Builder. Each area exports its list; OpenAPI is generated from this one array.
export function allRoutes(): AnyRoute[] {
  return [...healthRoutes, ...meRoutes];
}
