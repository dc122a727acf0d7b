import { api } from "./client";
import type { paths } from "./openapi";

// The API called by its OpenAPI path: `call("get", "/v1/experiments/{experiment_id}", { path: { experiment_id: 4 } })`
// answers the type openapi.d.ts (generated from the server's routes) gives that operation's success response; the
// path and query parameters and the JSON body are checked against it too. A route's answer that changes on the
// server then fails the dashboard's typecheck instead of being read under a type named by hand.

type Method = "get" | "post" | "put" | "patch" | "delete";

/** The paths that have an operation for `method`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = paths[P][M];
type Successes<R> = { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? R[S] : never }[keyof R];
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : undefined;

/** The JSON body of the operation's success response (undefined for one with no body, such as a 204). */
export type ResponseFor<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R } ? JsonOf<Successes<R>> : never;

type PathParams<O> = O extends { parameters: { path: infer X } } ? (X extends Record<string, unknown> ? X : never) : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? (Q extends Record<string, unknown> ? Q : never) : never;
type JsonBody<O> = O extends { requestBody?: infer RB }
  ? [NonNullable<RB>] extends [never]
    ? never
    : NonNullable<RB> extends { content: { "application/json": infer B } }
      ? B
      : never
  : never;

/** What the call takes besides the method and path; each part only where the operation has it. */
export type CallOptions<O> = ([PathParams<O>] extends [never] ? { path?: never } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: never } : { query?: QueryParams<O> }) &
  ([JsonBody<O>] extends [never] ? { body?: never } : { body: JsonBody<O> });

type Args<O> = [PathParams<O>] extends [never] ? [options?: CallOptions<O>] : [options: CallOptions<O>];

type Scalar = string | number | boolean | null | undefined;

/** The URL of `path` with its {parameters} filled in and the query appended (undefined and null values left out). */
export function urlOf(path: string, params?: Record<string, Scalar>, query?: Record<string, Scalar>): string {
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`${path}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) search.append(k, String(v));
  const qs = search.toString();
  return qs ? `${url}?${qs}` : url;
}

/** api() by the OpenAPI path: same cookie, CSRF header, language and ApiFailure errors; typed by openapi.d.ts. */
export function call<M extends Method, P extends PathsWith<M>>(
  method: M,
  path: P,
  ...[options]: Args<Operation<P, M>>
): Promise<ResponseFor<P, M>> {
  const o = (options ?? {}) as { path?: Record<string, Scalar>; query?: Record<string, Scalar>; body?: unknown };
  return api<ResponseFor<P, M>>(method.toUpperCase(), urlOf(path, o.path, o.query), o.body);
}
