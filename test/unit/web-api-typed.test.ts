import { describe, expect, it } from "vitest";
import { call, urlOf } from "../../web/src/api/typed";

// The dashboard's API calls by OpenAPI path (web/src/api/typed.ts). The URL building runs here; the types are checked
// by `tsc -p web/tsconfig.json`, which includes this file: each @ts-expect-error below fails the typecheck if the
// call it marks stops being an error.

describe("typed API calls", () => {
  it("fills path parameters (encoded) and appends the query without undefined or null values", () => {
    expect(urlOf("/v1/experiments/{experiment_id}", { experiment_id: 4 })).toBe("/v1/experiments/4");
    expect(urlOf("/v1/chat/conversations/{conversation_id}", { conversation_id: "a/b c" })).toBe("/v1/chat/conversations/a%2Fb%20c");
    expect(urlOf("/v1/experiments", undefined, { limit: 200, status: undefined, q: "dx_1" })).toBe("/v1/experiments?limit=200&q=dx_1");
    expect(urlOf("/v1/experiments", undefined, {})).toBe("/v1/experiments");
  });

  it("refuses a path whose parameter is missing instead of requesting a literal {name}", () => {
    expect(() => urlOf("/v1/models/{experiment_id}", {})).toThrow("the path parameter experiment_id is missing");
  });

  it("types: the answer is the operation's, and paths, parameters and bodies are checked", () => {
    // Never called: these lines are here for the typecheck.
    const typecheckOnly = async () => {
      const e = await call("get", "/v1/experiments/{experiment_id}", { path: { experiment_id: 3 } });
      const id: number = e.experiment_id;
      const list = await call("get", "/v1/experiments", { query: { limit: 200 } });
      const first: number = list.data[0].experiment_id;
      // @ts-expect-error the path parameter is required
      await call("get", "/v1/experiments/{experiment_id}");
      // @ts-expect-error no such field in the answer
      const none: string = e.no_such_field;
      // @ts-expect-error a body field the route does not take
      await call("post", "/v1/session", { body: { email: "a", pass: "b" } });
      // @ts-expect-error no such route
      await call("get", "/v1/no-such-route");
      return [id, first, none];
    };
    expect(typeof typecheckOnly).toBe("function");
  });
});
