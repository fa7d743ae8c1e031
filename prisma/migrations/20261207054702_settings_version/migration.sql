-- CreateTable
CREATE TABLE "settings_version" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "version" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "settings_version_pkey" PRIMARY KEY ("id")
);

-- One row (docs/decisions/040-settings-on-every-instance.md).
ALTER TABLE "settings_version" ADD CONSTRAINT "settings_version_one_row" CHECK ("id");
INSERT INTO "settings_version" ("id", "version") VALUES (true, 0);

-- Every statement that writes a setting an instance keeps in memory bumps the version, in its own
-- transaction: whoever reads the version after the write commits sees that its copy is older. The
-- API, the CLI and plain SQL alike. Writes to these tables are rare (people edit them), so the one
-- row's lock serializing them costs nothing.
CREATE FUNCTION settle_settings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE settings_version SET version = version + 1 WHERE id;
  RETURN NULL;
END
$$;

CREATE TRIGGER tool_catalog_entries_settings_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "tool_catalog_entries"
  FOR EACH STATEMENT EXECUTE FUNCTION settle_settings_changed();

CREATE TRIGGER policies_settings_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "policies"
  FOR EACH STATEMENT EXECUTE FUNCTION settle_settings_changed();
