// Stands in for the main database when the engine only compares schema
// files (pitfall 4 in shared/notes/prisma-offline.md): the WASM engine
// connects and probes the database as soon as it is created, even for
// `migrate diff --from-empty --to-schema`.
import { ColumnTypeEnum, DriverAdapterError } from "@prisma/driver-adapter-utils";

const PROBE = /^\s*SELECT EXISTS\(SELECT 1 FROM pg_namespace WHERE nspname = \$1\), version\(\)/i;

// Answers the connector's start-up probe and refuses everything else, so a
// command that really needs a database fails loudly.
export function stubAdapter() {
  const refuse = (sql) => {
    throw new DriverAdapterError({
      kind: "postgres",
      code: "N/A",
      severity: "ERROR",
      message: `The schema-engine bridge runs this command without a database and cannot execute: ${sql.slice(0, 120)}`,
    });
  };
  return {
    provider: "postgres",
    adapterName: "schema-engine-bridge-stub",
    async queryRaw(query) {
      if (!PROBE.test(query.sql)) refuse(query.sql);
      return {
        columnNames: ["exists", "version", "numeric_version"],
        columnTypes: [ColumnTypeEnum.Boolean, ColumnTypeEnum.Text, ColumnTypeEnum.Int32],
        // The engine only uses the version to pick SQL features; PostgreSQL 15
        // is what Settle runs on.
        rows: [[true, "PostgreSQL 15.0 (schema-engine bridge, no database)", 150000]],
      };
    },
    async executeRaw(query) {
      refuse(query.sql);
    },
    async executeScript(script) {
      refuse(script);
    },
    async startTransaction() {
      refuse("BEGIN");
    },
    getConnectionInfo() {
      return { supportsRelationJoins: true };
    },
    async dispose() {},
  };
}
