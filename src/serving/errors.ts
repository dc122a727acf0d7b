// Serving's own failures, typed: thrown here, turned into an HTTP answer once at the edge (src/http/errors.ts), so
// no caller has to recognise one by its message text.

/**
 * The experiment has no published model. `experimentStatus` is the experiment's state, known where the caller asked
 * to use the model (/predict): the edge answers 409 model_not_ready with it, so a client can tell "wait" from "wrong
 * id". Without it (the model routes: the model itself is the resource asked for) the edge answers 404.
 */
export class ModelNotPublished extends Error {
  constructor(
    readonly experimentId: number,
    readonly experimentStatus?: string,
  ) {
    super(`experiment ${experimentId} has no published model`);
    this.name = "ModelNotPublished";
  }
}

/** The model was unloaded (evicted or replaced by a newer version) before this request reached it: ask the cache again. */
export class PredictorClosed extends Error {
  constructor() {
    super("the model was unloaded");
    this.name = "PredictorClosed";
  }
}
