import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { canonicalJson } from "@/lib/evidence/canonical";
import { readPublicKey } from "@/lib/evidence/format";
import { ensureEvidenceKey, listEvidenceKeys, rotateEvidenceKey } from "@/lib/evidence/keys";
import { exportEvidence } from "@/lib/evidence/pack";
import { verifyEvidence, type TrustedKey } from "@/lib/evidence/verify-pack";
import { stringOption, type Command } from "../args";
import { withDatabase } from "../database";
import { CliError, refusalsAsCliErrors, UsageError } from "../errors";
import { printLine } from "../io";
import { formatTable, shortTime } from "../table";

// `settle evidence …`: signed evidence packs for an auditor (docs/audit.md "Evidence packs"). `verify` works
// on a file alone, offline and without a database; `key` and `export` read the database.

/** The keys --key names: a file or the text of a PEM key, base64 DER, or /.well-known/settle-evidence-key's JSON. */
export function readTrustedKeys(given: string): TrustedKey[] {
  const text = existsSync(given) ? readFileSync(given, "utf8") : given;
  let candidates: string[] = [text];
  try {
    const parsed = JSON.parse(text) as { keys?: Array<{ public_key?: unknown }>; public_key?: unknown };
    const listed = parsed.keys ?? [parsed];
    candidates = listed.map((k) => k.public_key).filter((k): k is string => typeof k === "string");
  } catch {
    // Not JSON: a PEM or base64 key.
  }
  const keys = candidates.map(readPublicKey).filter((k) => k !== null);
  if (keys.length === 0)
    throw new UsageError(
      "--key takes an Ed25519 public key: a PEM file or text, base64 DER, or the JSON of /.well-known/settle-evidence-key",
    );
  return keys.map((k) => ({ keyId: k.keyId, der: k.der }));
}

export const evidenceVerify: Command = {
  name: "evidence verify",
  summary: "check an evidence pack or bundle offline: signature, contents, chain links",
  help: `Usage: settle evidence verify <file> [--key <public key>]

Checks a pack (GET /api/v1/invocations/{id}/evidence) or a bundle ('settle
evidence export') without a database or network: the Ed25519 signature over
its canonical JSON, each list's count and digest, the chain links, and for a
bundle every pack against its index. Exits 1 with the first reason when
anything was changed, removed, added or signed by another key.

Options:
  --key <key>   the public key to trust: a PEM file, base64 DER, or the JSON of
                /.well-known/settle-evidence-key (every key listed). Without it
                the signature is checked against the key the file carries, which
                proves integrity but not that Settle signed it.

Example:
  npm run -s settle -- evidence verify evidence-inv-7f3.json --key settle-key.pem`,
  options: { key: { type: "string" } },
  args: { min: 1, max: 1 },
  run: async ({ values, args }, io) => {
    const file = args[0]!;
    if (!existsSync(file)) throw new CliError(`${file} does not exist`);
    const given = stringOption(values, "key");
    const keys = given === undefined ? null : readTrustedKeys(given);
    const result = verifyEvidence(readFileSync(file, "utf8"), keys);
    if (!result.ok) throw new CliError(`${file} is refused: ${result.reason}`);
    const what = result.kind === "bundle" ? `bundle of ${result.packs} packs` : "pack";
    printLine(io.stdout, `${file}: ${what} verified, signed by ${result.keyId}.`);
    if (!result.trusted)
      printLine(
        io.stderr,
        "Not checked against a key you trust: pass --key with the key from 'settle evidence key' or /.well-known/settle-evidence-key.",
      );
    if (result.unchained > 0)
      printLine(io.stderr, `${result.unchained} of ${result.packs} packs carry no hash-chain links.`);
    return 0;
  },
};

export const evidenceKey: Command = {
  name: "evidence key",
  summary: "show the public keys that sign evidence packs; --rotate makes a new one",
  help: `Usage: settle evidence key [--rotate] [--json]

Prints the active signing key's public half (PEM), which auditors pass to
'settle evidence verify --key', and lists every key with when it was made and
retired. Retired keys stay listed: the packs they signed still verify.

Options:
  --rotate   retire the active key (its private half is deleted) and make a new one
  --json     print the keys as /.well-known/settle-evidence-key answers them

Example:
  npm run -s settle -- evidence key > settle-key.pem`,
  options: { rotate: { type: "boolean" }, json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const { keys, rotated } = await withDatabase(async (db) => {
      const rotation = values.rotate ? await rotateEvidenceKey(db) : (await ensureEvidenceKey(db), null);
      return { keys: await listEvidenceKeys(db), rotated: rotation };
    });
    if (rotated)
      printLine(
        io.stderr,
        `Made ${rotated.keyId}${rotated.retired.length ? `; retired ${rotated.retired.join(", ")}` : ""}.`,
      );
    if (values.json) {
      printLine(io.stdout, JSON.stringify({ keys }, null, 2));
      return 0;
    }
    const active = keys.find((k) => k.retired_at === null);
    if (active) io.stdout.write(active.public_key_pem);
    const rows = keys.map((k) => [
      k.key_id,
      shortTime(k.created_at),
      k.retired_at ? shortTime(k.retired_at) : "active",
    ]);
    printLine(io.stderr, formatTable(["KEY", "CREATED", "RETIRED"], rows));
    return 0;
  },
};

function timeOption(values: Record<string, unknown>, name: string): Date | undefined {
  const value = stringOption(values as never, name);
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new UsageError(`--${name} takes a time such as 2026-12-01T00:00:00Z`);
  return date;
}

export const evidenceExport: Command = {
  name: "evidence export",
  summary: "write a signed bundle of evidence packs for a task or a time range",
  help: `Usage: settle evidence export (--task <task id> | --from <time> --to <time>) [--runtime <name>] [--out <file>]

Writes one JSON document: the evidence pack of every invocation of the task
(or first seen from --from up to --to), and an index of their digests signed
with Settle's key, so an auditor sees a pack removed or swapped. Check it
with 'settle evidence verify'. At most 5,000 packs per bundle.

Options:
  --task <id>        the task's invocations
  --from <time>      first seen at or after (ISO 8601)
  --to <time>        first seen before (ISO 8601)
  --runtime <name>   only this runtime's
  --out <file>       where to write (default: standard output)

Example:
  npm run -s settle -- evidence export --task ord-7741 --out ord-7741-evidence.json`,
  options: {
    task: { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    runtime: { type: "string" },
    out: { type: "string" },
  },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const taskId = stringOption(values, "task");
    const from = timeOption(values, "from");
    const to = timeOption(values, "to");
    if (taskId === undefined && (from === undefined || to === undefined))
      throw new UsageError("give --task, or both --from and --to");
    const runtime = stringOption(values, "runtime");
    const bundle = await withDatabase((db) =>
      refusalsAsCliErrors(() => exportEvidence(db, {}, { taskId, from, to, runtime })),
    );
    const text = `${canonicalJson(bundle)}\n`;
    const out = stringOption(values, "out");
    if (out) writeFileSync(out, text);
    else io.stdout.write(text);
    printLine(
      io.stderr,
      `${bundle.packs.length} packs${out ? ` written to ${out}` : ""}, signed by ${bundle.signature.key_id}.`,
    );
    return 0;
  },
};
