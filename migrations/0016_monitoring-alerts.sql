ALTER TABLE "monitoring_alerts" DROP COLUMN "delivered_at";--> statement-breakpoint
ALTER TABLE "monitoring_alerts" DROP COLUMN "delivery_attempts";--> statement-breakpoint
CREATE TABLE "monitoring_alert_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"alert_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"target" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "monitoring_alert_settings" (
	"experiment_uuid" uuid PRIMARY KEY NOT NULL,
	"rules" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"webhook_url" text,
	"email_to" text[] DEFAULT '{}'::text[] NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "model_version" integer;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "acknowledged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "resolved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "acted_by" uuid;--> statement-breakpoint
ALTER TABLE "monitoring_alert_deliveries" ADD CONSTRAINT "monitoring_alert_deliveries_alert_id_monitoring_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."monitoring_alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitoring_alert_settings" ADD CONSTRAINT "monitoring_alert_settings_experiment_uuid_experiments_id_fk" FOREIGN KEY ("experiment_uuid") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "monitoring_alert_deliveries_once" ON "monitoring_alert_deliveries" USING btree ("alert_id","channel","target");--> statement-breakpoint
CREATE INDEX "monitoring_alert_deliveries_due" ON "monitoring_alert_deliveries" USING btree ("state","next_at");--> statement-breakpoint
CREATE INDEX "monitoring_alerts_experiment" ON "monitoring_alerts" USING btree ("experiment_uuid","created_at");