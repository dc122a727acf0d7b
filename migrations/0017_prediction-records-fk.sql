ALTER TABLE "prediction_records" DROP CONSTRAINT "prediction_records_experiment_uuid_experiments_id_fk";
