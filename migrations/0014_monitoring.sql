CREATE TABLE "monitoring_aggregates" (
	"model_id" uuid NOT NULL,
	"experiment_uuid" uuid NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"series" text NOT NULL,
	"n" bigint NOT NULL,
	"sum" double precision NOT NULL,
	"counts" bigint[] NOT NULL,
	CONSTRAINT "monitoring_aggregates_model_id_hour_series_pk" PRIMARY KEY("model_id","hour","series")
);
--> statement-breakpoint
CREATE TABLE "monitoring_alerts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"experiment_uuid" uuid NOT NULL,
	"rule" text NOT NULL,
	"severity" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"comment" text,
	"delivered_at" timestamp with time zone,
	"delivery_attempts" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "prediction_records" (
	"experiment_uuid" uuid NOT NULL,
	"request_id" text NOT NULL,
	"model_id" uuid NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"key_id" uuid,
	"scores" real[] NOT NULL,
	"decision" integer,
	"label" integer,
	"label_at" timestamp with time zone,
	CONSTRAINT "prediction_records_experiment_uuid_request_id_pk" PRIMARY KEY("experiment_uuid","request_id")
);
--> statement-breakpoint
ALTER TABLE "monitoring_aggregates" ADD CONSTRAINT "monitoring_aggregates_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitoring_aggregates" ADD CONSTRAINT "monitoring_aggregates_experiment_uuid_experiments_id_fk" FOREIGN KEY ("experiment_uuid") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD CONSTRAINT "monitoring_alerts_experiment_uuid_experiments_id_fk" FOREIGN KEY ("experiment_uuid") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prediction_records" ADD CONSTRAINT "prediction_records_experiment_uuid_experiments_id_fk" FOREIGN KEY ("experiment_uuid") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prediction_records" ADD CONSTRAINT "prediction_records_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "monitoring_aggregates_experiment" ON "monitoring_aggregates" USING btree ("experiment_uuid","hour");--> statement-breakpoint
CREATE UNIQUE INDEX "monitoring_alerts_open" ON "monitoring_alerts" USING btree ("experiment_uuid","rule") WHERE state <> 'resolved';--> statement-breakpoint
CREATE INDEX "prediction_records_experiment_at" ON "prediction_records" USING btree ("experiment_uuid","at");--> statement-breakpoint
CREATE INDEX "prediction_records_at" ON "prediction_records" USING btree ("at");