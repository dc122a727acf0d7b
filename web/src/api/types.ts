// The dashboard's API types, all taken from openapi.d.ts (generated from the server's OpenAPI document).
import type { operations } from "./openapi";

type Responses<O extends keyof operations> = operations[O]["responses"];
/** The JSON body of operation O's response S. */
export type ResponseOf<O extends keyof operations, S extends keyof Responses<O>> = Responses<O>[S] extends {
  content: { "application/json": infer B };
}
  ? B
  : never;
/** The JSON request body of operation O. */
export type BodyOf<O extends keyof operations> = operations[O] extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : never;

export type Setup = ResponseOf<"get_v1_setup", 200>;
export type Session = ResponseOf<"get_v1_session", 200>;
export type SignUpAccepted = ResponseOf<"post_v1_users", 202>;
export type ApiKey = ResponseOf<"get_v1_api_keys", 200>["data"][number];
export type AuditPage = ResponseOf<"get_v1_audit", 200>;
export type NewApiKey = ResponseOf<"post_v1_api_keys", 201>;
export type UploadResult = ResponseOf<"post_v1_files", 201>;
export type PacsImportResult = ResponseOf<"post_v1_datasets_from_pacs", 201>;
export type DatasetReport = ResponseOf<"post_v1_datasets_validate", 200>;
export type DatasetProblem = DatasetReport["errors"][number];
export type ValidateRequest = BodyOf<"post_v1_datasets_validate">;
export type Columns = ResponseOf<"get_v1_datasets_columns", 200>;
export type ColumnInfo = Columns["columns"][number];
export type ExperimentRequest = BodyOf<"post_v1_experiments">;
export type Experiment = ResponseOf<"get_v1_experiments_experiment_id", 200>;
export type ExperimentList = ResponseOf<"get_v1_experiments", 200>;
export type ExperimentSummary = ExperimentList["data"][number];
export type ExperimentStatus = Experiment["status"];
export type Metrics = NonNullable<Experiment["metrics"]>;
export type Model = ResponseOf<"get_v1_models_experiment_id", 200>;
export type Prediction = ResponseOf<"post_v1_experiments_experiment_id_predict", 201>;
export type Report = ResponseOf<"get_v1_experiments_experiment_id_report", 200>;
export type ErrorBody = ResponseOf<"get_v1_me", "default">;
export type ManagedUser = ResponseOf<"get_v1_admin_users", 200>["data"][number];
export type Operations = ResponseOf<"get_v1_admin_workers", 200>;
export type OperationsWorker = Operations["workers"][number];
export type Invitation = ResponseOf<"get_v1_admin_invitations", 200>["data"][number];
export type NewInvitation = ResponseOf<"post_v1_admin_invitations", 201>;
export type NewResetLink = ResponseOf<"post_v1_admin_users_id_password_reset", 201>;
export type InvitationCheck = ResponseOf<"post_v1_invitations_check", 200>;
export type ResetCheck = ResponseOf<"post_v1_password_resets_check", 200>;
export type OperatingPointExplorer = ResponseOf<"get_v1_models_experiment_id_operating_point", 200>;
export type OperatingPointBody = BodyOf<"post_v1_models_experiment_id_operating_point">;
export type ModelVersion = ResponseOf<"post_v1_models_experiment_id_operating_point", 201>;
export type ModelVersions = ResponseOf<"get_v1_models_experiment_id_versions", 200>;
export type ChatReply = ResponseOf<"post_v1_chat", 201>;
export type ChatReference = ChatReply["references"][number];
export type ChatRequest = BodyOf<"post_v1_chat">;
export type ConversationList = ResponseOf<"get_v1_chat_conversations", 200>;
export type ConversationSummary = ConversationList["data"][number];
export type Conversation = ResponseOf<"get_v1_chat_conversations_conversation_id", 200>;
export type InputCheckSetting = ResponseOf<"get_v1_models_experiment_id_input_check", 200>;
export type InputCheckBody = BodyOf<"put_v1_models_experiment_id_input_check">;
export type ApprovalState = ResponseOf<"get_v1_experiments_experiment_id_approval", 200>;
export type PacsAutoScoreState = ResponseOf<"get_v1_models_experiment_id_pacs_auto_score", 200>;
export type MonitoringReport = ResponseOf<"get_v1_models_experiment_id_monitoring", 200>;
export type OutcomesResult = ResponseOf<"post_v1_models_experiment_id_outcomes", 200>;
