import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import type { StoredMessage } from "../errors.js";

// gen_random_uuid() works on Postgres 13+ and PGlite alike (uuidv7() needs 18; production may run 15).
const id = () =>
  uuid("id")
    .primaryKey()
    .default(sql`gen_random_uuid()`);
const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

export const users = pgTable(
  "users",
  {
    id: id(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: createdAt(),
    /** Set when the account's erasure began (DELETE /v1/me, `users erase`); start-up resumes it until the row is gone. */
    erasingAt: timestamp("erasing_at", { withTimezone: true }),
    /** admin (manages users: Settings → Users, /v1/admin) or member. */
    role: text("role").notNull().default("member"),
    /** Set while an administrator has disabled the account: no sign-in, no session, no API key works. */
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("users_email_lower").on(sql`lower(${t.email})`)],
);

/** The owning user: deleting the user row deletes what they own (account erasure relies on it). */
const ownerId = () =>
  uuid("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" });

/**
 * Who built a workspace's row (experiments, models, batches, files). Not its owner: the row belongs to its workspace,
 * so erasing the builder's account leaves it to the team with the builder unknown ("a former member", issue 50
 * item 6), while their personal workspace goes with them (workspaces.personal_owner_id cascades).
 */
const builderId = () => uuid("user_id").references(() => users.id, { onDelete: "set null" });

/**
 * A team's shared space (issue 50, docs/teams.md). Every user has one personal workspace (personal_owner_id set,
 * erased with the user); shared ones have none. What a user builds carries the workspace it belongs to.
 */
export const workspaces = pgTable("workspaces", {
  id: id(),
  name: text("name").notNull(),
  personalOwnerId: uuid("personal_owner_id")
    .unique()
    .references(() => users.id, { onDelete: "cascade" }),
  /**
   * A second pair of eyes (issue 50 item 4, docs/teams.md): a model version answers keys other than its builder's
   * only once a reviewer or owner has approved it. Off by default; an owner sets it.
   */
  requireApproval: boolean("require_approval").notNull().default(false),
  /**
   * Its deletion began (DELETE /v1/workspaces/{id}, src/erasure/workspace-erasure.ts): members and keys are gone and
   * the rest is erased in the background; start-up and the sweep resume a deletion a kill cut short.
   */
  erasingAt: timestamp("erasing_at", { withTimezone: true }),
  createdAt: createdAt(),
});

/** Who belongs to a workspace and with which role (owner, editor, reviewer, viewer: src/workspaces/permissions.ts). */
export const workspaceMembers = pgTable(
  "workspace_members",
  {
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index("workspace_members_user").on(t.userId)],
);

/**
 * The workspace a row belongs to; the services name it on every insert (the request's workspace). A row inserted
 * without one (an operator's SQL, an older replica) still gets its owner's personal workspace from the trigger of
 * migration 0018, which runs before the NOT NULL check. api_keys keeps it nullable: keys are made by the key area.
 */
const workspaceId = () =>
  uuid("workspace_id")
    .notNull()
    .references(() => workspaces.id, { onDelete: "cascade" });
const keyWorkspaceId = () => uuid("workspace_id").references(() => workspaces.id, { onDelete: "cascade" });

/**
 * One-time links an administrator hands over by hand (Builder sends no email): an invitation to create an account,
 * or a password reset for an existing one. Only the token's SHA-256 is stored, as for sessions and API keys; a link
 * is used at most once (used_at is set in the same transaction that creates the account or sets the password).
 */
export const accountLinks = pgTable(
  "account_links",
  {
    id: id(),
    /** invitation or password_reset. */
    kind: text("kind").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** Invitation: the role the new account gets. */
    role: text("role").notNull().default("member"),
    /** Invitation: the administrator's note of whom it is for (pre-fills the form); not binding. */
    email: text("email"),
    /** Password reset: whose password it sets. Goes with the account when it is erased. */
    userId: uuid("user_id").references(() => users.id, { onDelete: "cascade" }),
    /**
     * The administrator who made it. An erased administrator's pending invitations stay valid (set null): they were
     * made for the team, not for that person, and the other administrators still see and can revoke them.
     */
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
    /** Invitation: the account it created (no foreign key: the record outlives that account's erasure). */
    usedBy: uuid("used_by"),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /**
     * Invitation into a workspace (issue 50): accepting creates the account and its membership of this workspace with
     * workspace_role, in one transaction. A workspace deleted before then takes its pending invitations with it.
     */
    workspaceId: uuid("workspace_id").references(() => workspaces.id, { onDelete: "cascade" }),
    workspaceRole: text("workspace_role"),
  },
  (t) => [index("account_links_kind_created").on(t.kind, t.createdAt), index("account_links_user").on(t.userId)],
);

/** Dashboard sessions. The cookie carries a random token; only its SHA-256 is stored. */
export const sessions = pgTable(
  "sessions",
  {
    id: id(),
    userId: ownerId(),
    tokenHash: text("token_hash").notNull().unique(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("sessions_user").on(t.userId)],
);

/** API keys: shown once, stored only as SHA-256 of the whole key. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: id(),
    userId: ownerId(),
    workspaceId: keyWorkspaceId(),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    rateLimitPerMinute: integer("rate_limit_per_minute"),
    // What the key may do (src/auth/key-scopes.ts). NULL: a key made before scopes, which keeps full access so
    // that no running program broke at the upgrade; the dashboard says so and suggests replacing it.
    scopes: text("scopes").array(),
    // The experiment ids (decimal strings) a predict key may call; NULL: every model of its workspace.
    modelIds: text("model_ids").array(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    createdAt: createdAt(),
    // Written at most once a minute per key (ApiKeyService.touch), never on the request's own path.
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("api_keys_user").on(t.userId)],
);

/** One row per experiment; experiment_id is the caller's own number, unique within its workspace. user_id: who built it. */
export const experiments = pgTable(
  "experiments",
  {
    id: id(),
    userId: builderId(),
    workspaceId: workspaceId(),
    experimentId: integer("experiment_id").notNull(),
    request: jsonb("request").notNull(),
    // The caller's label for the experiment, editable later (PATCH); kept out of `request` so that editing it never
    // changes what was trained nor the request hash that makes a re-post idempotent.
    name: text("name"),
    description: text("description"),
    /** The team's own words on the model's intended use (the model card's first item); PATCH only, like the labels. */
    intendedUse: text("intended_use"),
    /** The request translated once (src/experiments/study.ts); null only on rows from before migration 0003. */
    study: jsonb("study"),
    requestHash: text("request_hash").notNull(),
    status: text("status").notNull(),
    progress: jsonb("progress"),
    history: jsonb("history")
      .notNull()
      .default(sql`'[]'::jsonb`),
    datasetReport: jsonb("dataset_report"),
    split: jsonb("split"),
    metrics: jsonb("metrics"),
    originalMetrics: jsonb("original_metrics"),
    failureReason: text("failure_reason"),
    /** failure_reason as catalog words (src/errors.ts StoredMessage), so a view says it in its reader's language. */
    failureText: jsonb("failure_text").$type<StoredMessage>(),
    attempts: integer("attempts").notNull().default(0),
    cancelRequested: boolean("cancel_requested").notNull().default(false),
    // Lease: which runner holds the job and until when; a job is run only by the holder of a live lease.
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** Every prediction on a DICOMweb link writes its answer back into the owner's PACS (docs/pacs.md); PUT only. */
    pacsSendBack: boolean("pacs_send_back").notNull().default(false),
  },
  (t) => [
    uniqueIndex("experiments_workspace_number").on(t.workspaceId, t.experimentId),
    index("experiments_user").on(t.userId),
    index("experiments_status").on(t.status),
  ],
);

/** Every state change and progress event, in order: the SSE stream and its replay. */
export const experimentEvents = pgTable(
  "experiment_events",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    experimentUuid: uuid("experiment_uuid")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    at: createdAt(),
    type: text("type").notNull(),
    data: jsonb("data").notNull(),
  },
  (t) => [index("experiment_events_exp").on(t.experimentUuid, t.seq)],
);

/** Published model versions; the one made current last (made_current_at: the newest, unless rolled back) is served. */
export const models = pgTable(
  "models",
  {
    id: id(),
    userId: builderId(),
    workspaceId: workspaceId(),
    experimentUuid: uuid("experiment_uuid")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    experimentId: integer("experiment_id").notNull(),
    version: integer("version").notNull(),
    kind: text("kind").notNull(),
    storePath: text("store_path").notNull(),
    manifest: jsonb("manifest").notNull(),
    createdAt: createdAt(),
    /**
     * When this version was made the one served: at publication, or later by rollback (POST
     * /v1/models/{id}/versions/{version}/current). The served version is the one made current last (migration 0010).
     */
    madeCurrentAt: timestamp("made_current_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * Who approved this version for use (a reviewer or owner who did not build it), when, and the intended use they
     * approved. A new version (an operating point) starts unapproved. An erased approver leaves approved_at set and
     * approved_by null: the approval stands, shown as by a former member.
     */
    approvedBy: uuid("approved_by").references(() => users.id, { onDelete: "set null" }),
    approvedAt: timestamp("approved_at", { withTimezone: true }),
    approvedIntendedUse: text("approved_intended_use"),
  },
  (t) => [
    uniqueIndex("models_experiment_version").on(t.experimentUuid, t.version),
    index("models_workspace_experiment").on(t.workspaceId, t.experimentId),
    index("models_user").on(t.userId),
  ],
);

/**
 * Batch scoring of a published model (POST /v1/models/{id}/batch): a table of rows or a zip of images, scored by the
 * same code as /predict; the input and results.csv live in the bucket under `<workspace storage prefix>/batches/<id>/`. `experimentUuid`
 * ties it to the experiment, so deleting the experiment deletes its batches.
 */
export const batches = pgTable(
  "batches",
  {
    id: id(),
    userId: builderId(),
    workspaceId: workspaceId(),
    experimentUuid: uuid("experiment_uuid")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    experimentId: integer("experiment_id").notNull(),
    modelVersion: integer("model_version").notNull(),
    inputKind: text("input_kind").notNull(),
    /** An image batch asked for Grad-CAM overlays (?overlays=true): overlays.zip sits beside results.csv once done. */
    overlays: boolean("overlays").notNull().default(false),
    /** The sent file's name as the client gave it (?file_name=), so a list of batches says which file each was. */
    fileName: text("file_name"),
    /** Each DICOM's answer is written back into the PACS as a structured report (?send_back=true, docs/pacs.md). */
    sendBack: boolean("send_back").notNull().default(false),
    /** Of a send-back batch's images, those whose structured report reached the PACS, and those whose did not. */
    pacsSent: integer("pacs_sent").notNull().default(0),
    pacsFailed: integer("pacs_failed").notNull().default(0),
    status: text("status").notNull(),
    total: integer("total"),
    done: integer("done").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    flagged: integer("flagged").notNull().default(0),
    failureReason: text("failure_reason"),
    /** failure_reason as catalog words (src/errors.ts StoredMessage), so a view says it in its reader's language. */
    failureText: jsonb("failure_text").$type<StoredMessage>(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [index("batches_workspace_created").on(t.workspaceId, t.createdAt), index("batches_user").on(t.userId)],
);

/** Uploaded objects, so the dashboard can list a user's files with their checksums. */
export const files = pgTable(
  "files",
  {
    id: id(),
    userId: builderId(),
    workspaceId: workspaceId(),
    path: text("path").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    sha256: text("sha256").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("files_path").on(t.path)],
);

/** A chat conversation; its messages are chat_messages. Always read through the owner's user id. */
export const chatConversations = pgTable(
  "chat_conversations",
  {
    id: id(),
    userId: ownerId(),
    workspaceId: workspaceId(),
    title: text("title").notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("chat_conversations_user").on(t.userId, t.updatedAt), index("chat_conversations_workspace").on(t.workspaceId, t.updatedAt)],
);

/** Chat history per user, so the assistant keeps the conversation. `refs` are what a reply cited. */
export const chatMessages = pgTable(
  "chat_messages",
  {
    id: id(),
    userId: ownerId(),
    conversationId: uuid("conversation_id")
      .notNull()
      .references(() => chatConversations.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
    content: text("content").notNull(),
    refs: jsonb("refs")
      .notNull()
      .default(sql`'[]'::jsonb`),
    backend: text("backend"),
    createdAt: createdAt(),
  },
  (t) => [index("chat_messages_user").on(t.userId, t.createdAt), index("chat_messages_conversation").on(t.conversationId, t.createdAt)],
);

/**
 * Who did what and when (GET /v1/audit): append-only (migration 0007's trigger refuses UPDATE and DELETE), and
 * kept after the data it mentions is erased, so actor_id is deliberately no foreign key. It holds no patient
 * data: ids, numbers, key prefixes, sizes and hashes; never file names, column names, labels or request bodies.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    at: createdAt(),
    actorId: uuid("actor_id").notNull(),
    /** No foreign key, as actor_id: the log outlives the workspace it mentions. */
    workspaceId: uuid("workspace_id"),
    /** api_key, session or cli. */
    via: text("via").notNull(),
    action: text("action").notNull(),
    /** What it acted on, in words without patient data: "experiment 3", "key bld_1a2B3c4D". */
    target: text("target"),
    details: jsonb("details")
      .notNull()
      .default(sql`'{}'::jsonb`),
  },
  (t) => [index("audit_events_actor").on(t.actorId, t.seq), index("audit_events_workspace").on(t.workspaceId, t.seq)],
);

/**
 * A user's PACS (Settings → PACS, docs/pacs.md): its DICOMweb root, and the credentials Builder sends there only
 * (links under the root, STOW-RS of the answers). The password is sealed with AES-256-GCM under SECRETS_KEY
 * (src/pacs/secret-box.ts) and never read back out through the API.
 */
export const pacsConnections = pgTable("pacs_connections", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  /** e.g. https://pacs.hospital.example/dicom-web (no trailing slash). */
  dicomWebUrl: text("dicomweb_url").notNull(),
  username: text("username"),
  passwordSealed: text("password_sealed"),
  /** The caption's warning burned into secondary captures; null: the default wording of docs/pacs.md. */
  caption: text("caption"),
  /** Whether answers written back carry a secondary capture besides the structured report. */
  secondaryCapture: boolean("secondary_capture").notNull().default(true),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

/**
 * The documentation (README.md, docs/**\/*.md) cut into sections for the assistant's full-text search.
 * Rows are keyed by a hash of the docs (`version`), so processes running different docs never disturb each other.
 */
export const docChunks = pgTable(
  "doc_chunks",
  {
    version: text("version").notNull(),
    seq: integer("seq").notNull(),
    source: text("source").notNull(),
    heading: text("heading").notNull(),
    anchor: text("anchor").notNull(),
    body: text("body").notNull(),
    tsv: tsvector("tsv")
      .notNull()
      .generatedAlwaysAs(sql`setweight(to_tsvector('english', heading), 'A') || to_tsvector('english', body)`),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.version, t.seq] }), index("doc_chunks_tsv").using("gin", t.tsv)],
);

/**
 * Scoring new studies as they arrive (docs/pacs.md, "Scoring new studies"): a model's rule on the user's PACS. Every
 * new instance matching it (modality, body part, series description; null matches anything) is scored and its answer
 * written back.
 */
export const pacsAutoScoreRules = pgTable(
  "pacs_auto_score_rules",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    experimentId: integer("experiment_id").notNull(),
    enabled: boolean("enabled").notNull().default(false),
    modality: text("modality"),
    bodyPart: text("body_part"),
    seriesDescription: text("series_description"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.experimentId] })],
);

/**
 * Where each user's PACS feed has been read up to (Orthanc's /changes sequence number), and which server process holds
 * it now: a lease, so that of several replicas one follows a feed at a time, and another takes over when it dies.
 */
export const pacsFeedCursors = pgTable("pacs_feed_cursors", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  lastSeq: bigint("last_seq", { mode: "number" }).notNull().default(0),
  leaseOwner: text("lease_owner"),
  leaseUntil: timestamp("lease_until", { withTimezone: true }),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Each instance scored by a rule, once (the key): written in the same transaction as the cursor that passes it. */
export const pacsAutoScored = pgTable(
  "pacs_auto_scored",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    experimentId: integer("experiment_id").notNull(),
    sopInstanceUid: text("sop_instance_uid").notNull(),
    /** sent, or failed (reason says why: the dashboard lists them). */
    outcome: text("outcome").notNull(),
    reason: text("reason"),
    /** The same reason in catalog words (key and values), so it is said in the reader's language. */
    reasonText: jsonb("reason_text").$type<StoredMessage>(),
    srInstanceUid: text("sr_instance_uid"),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.experimentId, t.sopInstanceUid] })],
);

/**
 * One small record per prediction (issue 49): enough to join a true outcome later, nothing about the patient. Its
 * id is the answer's x-request-id (per experiment), then when, which model version, which API key, the scores and
 * the decision (the predicted class index); never the input, the image, a link or an identifier. `label` is the
 * class index of the outcome posted later (POST /v1/models/{id}/outcomes). Purged after PREDICTION_RETENTION_DAYS;
 * gone with its model version (cascade; the experiment's goes through its versions), so deleting a model, an experiment or an account takes them.
 */
export const predictionRecords = pgTable(
  "prediction_records",
  {
    // No foreign keys: each key checked costs every inserted record a lookup in the parent's index, and the two were
    // together about 40 % of a record's insert (issue 49 item 8; bench/serve/notebook/2026-11-29-monitoring-hotpath.md).
    // Deleting a model deletes its records by a trigger on models instead (migration 0031,
    // prediction_records_model_gone): one statement per deleted model, through the primary key's experiment prefix,
    // in the deleting transaction, and it fires for models deleted by the experiment's cascade too. The flush takes
    // its models FOR KEY SHARE and skips versions already gone, so no record outlives its model.
    experimentUuid: uuid("experiment_uuid").notNull(),
    requestId: text("request_id").notNull(),
    modelId: uuid("model_id").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull(),
    keyId: uuid("key_id"),
    scores: customType<{ data: number[] }>({ dataType: () => "real[]" })("scores").notNull(),
    decision: integer("decision"),
    label: integer("label"),
    labelAt: timestamp("label_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.experimentUuid, t.requestId] }),
    // The purge goes through this one, experiment by experiment; no index on `at` alone (one more entry per prediction).
    index("prediction_records_experiment_at").on(t.experimentUuid, t.at),
  ],
);

/**
 * Serving's aggregates per model version, hour and series ("predictions", "latency", "score", "col:<name>"): a
 * count, a sum and bin counts, all additive, so every replica adds its own (upsert-add) and the sums are right.
 */
export const monitoringAggregates = pgTable(
  "monitoring_aggregates",
  {
    modelId: uuid("model_id")
      .notNull()
      .references(() => models.id, { onDelete: "cascade" }),
    experimentUuid: uuid("experiment_uuid")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    hour: timestamp("hour", { withTimezone: true }).notNull(),
    series: text("series").notNull(),
    n: bigint("n", { mode: "number" }).notNull(),
    sum: customType<{ data: number }>({ dataType: () => "double precision" })("sum").notNull(),
    counts: customType<{ data: number[] }>({ dataType: () => "bigint[]" })("counts").notNull(),
  },
  (t) => [primaryKey({ columns: [t.modelId, t.hour, t.series] }), index("monitoring_aggregates_experiment").on(t.experimentUuid, t.hour)],
);

/**
 * A monitoring alert (docs/monitoring.md#alerts), recorded once per experiment and rule while it is not resolved
 * (the partial unique index: every replica may evaluate the rules, only one insert wins), then acknowledged or
 * resolved with a comment. No patient data: the rule, the figures that broke it, and the people's comments.
 */
export const monitoringAlerts = pgTable(
  "monitoring_alerts",
  {
    id: id(),
    experimentUuid: uuid("experiment_uuid")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    rule: text("rule").notNull(),
    severity: text("severity").notNull(),
    state: text("state").notNull().default("open"),
    /** The model version served when it was opened. */
    modelVersion: integer("model_version"),
    details: jsonb("details")
      .notNull()
      .default(sql`'{}'::jsonb`),
    openedAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    acknowledgedAt: timestamp("acknowledged_at", { withTimezone: true }),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    /** Who acknowledged or resolved it last (a user id), and what they wrote. */
    actedBy: uuid("acted_by"),
    comment: text("comment"),
    /** Who acknowledged it (kept when someone else resolves it later); null when nobody did. */
    acknowledgedBy: uuid("acknowledged_by"),
    /** Who resolved it; null when nobody did, or when Builder did because the rule held again over a later window. */
    resolvedBy: uuid("resolved_by"),
    resolvedAutomatically: boolean("resolved_automatically").notNull().default(false),
  },
  (t) => [
    uniqueIndex("monitoring_alerts_open")
      .on(t.experimentUuid, t.rule)
      .where(sql`state <> 'resolved'`),
    index("monitoring_alerts_experiment").on(t.experimentUuid, t.openedAt),
  ],
);

/** A model's alert rules (only what differs from the defaults) and where its alerts go. */
export const monitoringAlertSettings = pgTable("monitoring_alert_settings", {
  experimentUuid: uuid("experiment_uuid")
    .primaryKey()
    .references(() => experiments.id, { onDelete: "cascade" }),
  rules: jsonb("rules")
    .notNull()
    .default(sql`'{}'::jsonb`),
  webhookUrl: text("webhook_url"),
  emailTo: text("email_to")
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The outbox of alert deliveries, one row per alert and destination, written in the alert's own transaction: a
 * replica claims a due row under a lease (skip locked), sends it, and records the outcome only while it still holds
 * the lease, so a crash neither loses a delivery nor records it twice.
 */
export const monitoringAlertDeliveries = pgTable(
  "monitoring_alert_deliveries",
  {
    id: id(),
    alertId: uuid("alert_id")
      .notNull()
      .references(() => monitoringAlerts.id, { onDelete: "cascade" }),
    /** What the delivery tells: that the alert opened, or that it resolved by itself (its condition cleared). */
    event: text("event").notNull().default("opened"),
    channel: text("channel").notNull(),
    target: text("target").notNull(),
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAt: timestamp("next_at", { withTimezone: true }).notNull().defaultNow(),
    leaseOwner: text("lease_owner"),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("monitoring_alert_deliveries_once").on(t.alertId, t.event, t.channel, t.target),
    index("monitoring_alert_deliveries_due").on(t.state, t.nextAt),
  ],
);
