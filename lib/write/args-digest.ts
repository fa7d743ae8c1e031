import { createHash } from "node:crypto";
import { DEFAULT_VOLATILE_ARGS } from "../outcome/record-fields";

// The one digest of a call's arguments (decision 028), so that a retry the
// model sends under a new idempotency key is still recognised as the same
// call: `sha256:` and the hex SHA-256 of the arguments' canonical JSON — object
// keys sorted by UTF-16 code unit at every level, no spaces, strings and
// numbers as JSON.stringify writes them, an integer past 2^53 (a BigInt, lib/json) as all its digits — with
// the tool's volatile arguments
// (top-level names: a key, a nonce, a time) left out. Ingest, the guard and
// OTLP spans digest with it, and so does an approval with edited arguments; the clients' docs describe it. Pure apart from hashing.

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** JSON with object keys sorted at every level and no spaces: one text for one value, however its keys were ordered. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  if (typeof value === "bigint") return value.toString();
  return JSON.stringify(value) ?? "null";
}

/**
 * The digest of `args` without the top-level names in `volatileArgs` (the
 * tool's catalog entry's list, else Settle's default). Arguments that are not
 * an object (a span may carry text) are digested whole.
 */
export function argsDigest(args: unknown, volatileArgs: readonly string[] = DEFAULT_VOLATILE_ARGS): string {
  let kept = args;
  if (isRecord(args) && volatileArgs.length > 0) {
    const volatile = new Set(volatileArgs);
    kept = Object.fromEntries(Object.entries(args).filter(([k]) => !volatile.has(k)));
  }
  return `sha256:${createHash("sha256").update(canonicalJson(kept)).digest("hex")}`;
}
