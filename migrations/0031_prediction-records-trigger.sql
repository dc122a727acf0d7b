ALTER TABLE "prediction_records" DROP CONSTRAINT "prediction_records_model_id_models_id_fk";
--> statement-breakpoint
-- Written by hand after drizzle-kit's line above (it does not model triggers): deleting a model deletes its prediction
-- records, as the foreign key's cascade did, for a model deleted by itself or by its experiment's cascade. Through the
-- primary key's experiment prefix, rather than a scan of model_id (which has no index).
CREATE FUNCTION "prediction_records_model_gone"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "prediction_records" WHERE "experiment_uuid" = OLD."experiment_uuid" AND "model_id" = OLD."id";
  RETURN OLD;
END $$;--> statement-breakpoint
CREATE TRIGGER "models_delete_prediction_records" AFTER DELETE ON "models" FOR EACH ROW EXECUTE FUNCTION "prediction_records_model_gone"();
