import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as evidenceRoute } from "@/app/api/v1/invocations/[invocation_id]/evidence/route";
import { GET as keysRoute } from "@/app/api/v1/evidence-keys/route";
import { getDb } from "@/lib/db/client";
import { setEnv } from "@/lib/env";
import { canonicalJson, digestOf } from "@/lib/evidence/canonical";
import { keyIdOf } from "@/lib/evidence/format";
import { rotateEvidenceKey } from "@/lib/evidence/keys";
import { exportEvidence } from "@/lib/evidence/pack";
import { verifyEvidence } from "@/lib/evidence/verify-pack";
import { parseExactJson } from "@/lib/json/exact";
import { actOnInvocation } from "@/lib/invocations/act";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, openSettle, runSettleCli, type TestContext } from "./harness";
import { getInvocation, guard, ingest } from "./routes";

// Section 2 of issue 41: an invocation's signed evidence pack, checked offline; a changed byte, a swapped
// signature, a missing entry or another signer refused; bundles for a task; keys rotated and still verifying.

const dir = mkdtempSync(join(tmpdir(), "settle-evidence-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe("evidence packs", () => {
  let t: TestContext;
  const packText = async (id: string, key = t.key) => {
    const res = await fetchPack(id, key);
    expect(res.status).toBe(200);
    return res.text;
  };
  const fetchPack = async (id: string, key: string) => {
    const res = await evidenceRoute(
      new Request(`http://settle.test/api/v1/invocations/${id}/evidence?download=1`, {
        headers: { authorization: `Bearer ${key}` },
      }),
      { params: Promise.resolve({ invocation_id: id }) },
    );
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const publicKeys = async () => (await call(keysRoute, { path: "/api/v1/evidence-keys" })).body;

  beforeAll(async () => {
    t = await openSettle("postgres");
    const args = { amount: 50, order: 12345678901234567890n, api_key: "sk_live_abcdefghijklmnopqrstuvwx" };
    // The order number past 2^53 goes in as digits, as a runtime sends it.
    const body = (records: object[]) => JSON.stringify({ records }).replaceAll('"ORDER"', String(args.order));
    const asked = {
      event_id: "ev-1-ask",
      task_id: "ord-9",
      invocation_id: "ev-1",
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: "key-ev-1",
      arguments: { amount: args.amount, order: "ORDER", api_key: args.api_key },
      envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
    };
    await call(ingest, { key: t.key, raw: body([asked]) });
    const before = (await call(getInvocation, { key: t.key, params: { invocation_id: "ev-1" } })).body;
    await actOnInvocation(
      t.db,
      { invocationId: "ev-1" },
      { action: "approve" },
      { actor: "ana@example.com", version: before.version },
    );
    await call(ingest, {
      key: t.key,
      raw: body([
        { ...asked, event_id: "ev-1-ran", attempt: 2, envelope: { ok: true, commit_state: "committed" } },
        {
          event_id: "ev-2-o1",
          task_id: "ord-9",
          invocation_id: "ev-2",
          attempt: 1,
          tool: "charge_card",
          effect_class: "money",
          envelope: { title: "Gateway Timeout", status: 504 },
        },
      ]),
    });
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("answers the whole history signed, redacted, with the digest approved and long integers exact", async () => {
    const res = await fetchPack("ev-1", t.key);
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const text = res.text;
    expect(text).not.toContain("sk_live_abcdefghijklmnopqrstuvwx");
    expect(text).toContain('"order":12345678901234567890');
    // Served in the canonical form that was signed: its own canonical JSON, byte for byte.
    const doc = parseExactJson(text) as any;
    expect(text).toBe(`${canonicalJson(doc)}\n`);
    const inv = (await call(getInvocation, { key: t.key, params: { invocation_id: "ev-1" } })).body;
    expect(doc.pack.invocation).toMatchObject({ invocation_id: "ev-1", task_id: "ord-9", runtime: t.runtime });
    expect(doc.pack.arguments.digest).toBe(inv.args_digest);
    expect(doc.pack.attempts).toHaveLength(2);
    expect(doc.pack.attempts[0].envelope).toMatchObject({ next_action: "request_approval" });
    expect(doc.pack.transitions.map((x: { to_status: string }) => x.to_status)).toEqual([
      "awaiting_approval",
      "approved",
      "succeeded",
    ]);
    expect(doc.pack.approvals).toEqual([
      expect.objectContaining({ actor: "ana@example.com", args_digest: inv.args_digest, args_digest_from: "approval" }),
    ]);
    expect(doc.pack.final).toMatchObject({ status: "succeeded", commit_state: "committed", decision: "do_not_retry" });
    expect(doc.pack.contents.attempts.count).toBe(2);
    // Every entry joined its runtime's chain as it was written (lib/chain): each carries its link.
    expect(doc.pack.chain.unchained).toEqual([]);
    expect(doc.pack.chain.links).toHaveLength(2 + 3 + doc.pack.actions.length);
    expect(verifyEvidence(text, null)).toMatchObject({ ok: true, kind: "pack", trusted: false, unchained: 0 });
  });

  it("is read like the invocation: another runtime's key finds nothing", async () => {
    const other = await createRuntimeKey(t.db, "rt-other");
    expect((await fetchPack("ev-1", other.key)).status).toBe(404);
  });

  it("settle evidence verify: exit 0 with the published keys; 1 with the reason for a change, a swap or a missing entry", async () => {
    const keysFile = file("keys.json", JSON.stringify(await publicKeys()));
    const good = file("ev-1.json", await packText("ev-1"));
    const ok = await runSettleCli(["evidence", "verify", good, "--key", keysFile]);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toMatch(/pack verified, signed by sek_[0-9a-f]{16}/);

    const text = await packText("ev-1");
    const doc = parseExactJson(text) as any;
    // One entry removed from a list (the signature left as it was).
    const missing = structuredClone(doc);
    missing.pack.attempts.splice(0, 1);
    const refused = await runSettleCli([
      "evidence",
      "verify",
      file("missing.json", canonicalJson(missing)),
      "--key",
      keysFile,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("attempts: 1 entries where the pack lists 2 (an entry was removed)");
    // The signature of another pack.
    const other = parseExactJson(await packText("ev-2")) as any;
    const swapped = { ...doc, signature: other.signature };
    expect(verifyEvidence(canonicalJson(swapped), null)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("signature does not match"),
    });
    // Signed again by someone else: whole by itself, refused against Settle's keys.
    const forger = generateKeyPairSync("ed25519");
    const der = forger.publicKey.export({ format: "der", type: "spki" });
    const forged = {
      ...doc,
      pack: { ...doc.pack, final: { ...doc.pack.final, status: "failed" } },
    };
    forged.signature = {
      algorithm: "Ed25519",
      key_id: keyIdOf(der),
      public_key: der.toString("base64"),
      value: sign(null, Buffer.from(canonicalJson(forged.pack)), forger.privateKey).toString("base64"),
    };
    expect(verifyEvidence(canonicalJson(forged), null)).toMatchObject({ ok: true, trusted: false });
    const forgedRun = await runSettleCli([
      "evidence",
      "verify",
      file("forged.json", canonicalJson(forged)),
      "--key",
      keysFile,
    ]);
    expect(forgedRun.code).toBe(1);
    expect(forgedRun.stderr).toContain("which is not among the keys given");
  });

  it("refuses the pack when any one byte is changed", async () => {
    const text = await packText("ev-1");
    const bytes = Buffer.from(text, "utf8");
    let tried = 0;
    // Every byte of the signature and every 11th byte before it (the last, a newline, aside), each turned into
    // another printable character. (A base64 signature's last character has bits decoders ignore, and the DER
    // reader took a trailing byte after a public key: both were accepted once.) All bytes take 20 s.
    const signatureAt = text.indexOf('"signature":');
    const positions = [...Array(bytes.length - 1).keys()].filter((i) => i >= signatureAt || i % 11 === 0);
    for (const i of positions) {
      const changed = Buffer.from(bytes);
      changed[i] = changed[i] === 0x41 ? 0x42 : 0x41;
      const result = verifyEvidence(changed.toString("utf8"), null);
      expect(result.ok, `byte ${i} (${String.fromCharCode(bytes[i]!)}) in …${text.slice(i - 40, i + 20)}…`).toBe(false);
      tried++;
    }
    expect(tried).toBeGreaterThan(500);
  });

  it("exports a task as a signed bundle; a pack removed from it is named", async () => {
    const bundle = await exportEvidence(t.db, {}, { taskId: "ord-9" });
    expect(bundle.packs.map((p) => p.pack.invocation.invocation_id)).toEqual(["ev-1", "ev-2"]);
    const text = canonicalJson(bundle);
    expect(verifyEvidence(text, null)).toMatchObject({ ok: true, kind: "bundle", packs: 2, unchained: 0 });
    const short = parseExactJson(text) as any;
    short.packs.pop();
    expect(verifyEvidence(canonicalJson(short), null)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("lists 2 packs but holds 1"),
    });
  });

  it("a rotated key keeps verifying the packs it signed; new packs carry the new key", async () => {
    const before = await packText("ev-2");
    const oldKey = JSON.parse(before).signature.key_id;
    const { keyId } = await rotateEvidenceKey(t.db);
    expect(keyId).not.toBe(oldKey);
    const keys = (await publicKeys()).keys;
    expect(keys.map((k: { key_id: string }) => k.key_id)).toEqual([keyId, oldKey]);
    expect(keys[1].retired_at).not.toBeNull();
    const after = await packText("ev-2");
    expect(JSON.parse(after).signature.key_id).toBe(keyId);
    const keysFile = file("keys-rotated.json", JSON.stringify({ keys }));
    for (const text of [before, after]) {
      expect((await runSettleCli(["evidence", "verify", file("p.json", text), "--key", keysFile])).code).toBe(0);
    }
  });

  it("a key sealed under another auth secret answers 500 saying what to do; a rotation makes a usable one", async () => {
    setEnv({ SETTLE_AUTH_SECRET: "another-secret-of-at-least-32-characters" });
    try {
      const res = await fetchPack("ev-1", t.key);
      expect(res.status).toBe(500);
      expect(JSON.parse(res.text)).toMatchObject({
        code: "INTERNAL",
        agent_message: expect.stringContaining("settle evidence key --rotate"),
      });
      await rotateEvidenceKey(t.db);
      expect((await fetchPack("ev-1", t.key)).status).toBe(200);
    } finally {
      setEnv({ SETTLE_AUTH_SECRET: undefined });
      await rotateEvidenceKey(t.db);
    }
  });

  it("carries each chained entry's link; the offline check recomputes it and matches it to the entry", async () => {
    // ev-2's rows joined their runtime's chain as they were written (lib/write, lib/invocations/action-insert.ts).
    const text = await packText("ev-2");
    const doc = parseExactJson(text) as any;
    expect(doc.pack.chain.links.map((l: { entry: string }) => l.entry).sort()).toEqual(
      ["attempts/0", "transitions/0", ...doc.pack.actions.map((_: unknown, i: number) => `actions/${i}`)].sort(),
    );
    expect(doc.pack.chain.unchained).toEqual([]);
    expect(verifyEvidence(text, null)).toMatchObject({ ok: true, unchained: 0 });

    // Re-signed by a forger after changing an entry: whole by its own signature, but not what the chain recorded.
    const forger = generateKeyPairSync("ed25519");
    const der = forger.publicKey.export({ format: "der", type: "spki" });
    const resign = (pack: any) => ({
      ...doc,
      pack,
      signature: {
        algorithm: "Ed25519",
        key_id: keyIdOf(der),
        public_key: der.toString("base64"),
        value: sign(null, Buffer.from(canonicalJson(pack)), forger.privateKey).toString("base64"),
      },
    });
    const edited = structuredClone(doc.pack);
    edited.attempts[0].code = "OK";
    edited.contents.attempts.sha256 = digestOf(edited.attempts);
    expect(verifyEvidence(canonicalJson(resign(edited)), null)).toMatchObject({
      ok: false,
      reason: "attempts/0: its code differs from what its chain recorded",
    });
    const unlinked = structuredClone(doc.pack);
    unlinked.chain.links = unlinked.chain.links.filter((l: { entry: string }) => l.entry !== "transitions/0");
    expect(verifyEvidence(canonicalJson(resign(unlinked)), null)).toMatchObject({
      ok: false,
      reason: "transitions/0 has no chain link",
    });
    const relinked = structuredClone(doc.pack);
    relinked.chain.links[0].prev = "11".repeat(32);
    expect(verifyEvidence(canonicalJson(resign(relinked)), null)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("its link hash is not SHA-256(prev ‖ content hash)"),
    });
  });

  it("settle evidence export and key through the CLI", async () => {
    const out = join(dir, "bundle.json");
    const exported = await runSettleCli(["evidence", "export", "--task", "ord-9", "--out", out]);
    expect(exported).toMatchObject({ code: 0 });
    const key = await runSettleCli(["evidence", "key"]);
    expect(key.stdout).toContain("-----BEGIN PUBLIC KEY-----");
    const pem = file("key.pem", key.stdout);
    const verified = await runSettleCli(["evidence", "verify", out, "--key", pem]);
    expect(verified.stdout).toContain("bundle of 2 packs verified");
    expect((await runSettleCli(["evidence", "export"])).code).toBe(1);
    t.db = await getDb();
  });

  it("carries the guard's refusals of the call with their links: a refused duplicate removed or changed is named", async () => {
    const ask = () =>
      call(guard, {
        key: t.key,
        path: "/api/v1/guard",
        body: { task_id: "ord-9", tool: "create_refund", idempotency_key: "key-ev-1", effect_class: "money" },
      });
    const refused = (await ask()).body;
    expect(refused).toMatchObject({ allow: false, invocation_id: "ev-1" });
    const text = await packText("ev-1");
    const doc = parseExactJson(text) as any;
    expect(doc.pack.guard_refusals).toEqual([
      expect.objectContaining({
        invocation_id: "ev-1",
        task_id: "ord-9",
        idempotency_key: "key-ev-1",
        allow: false,
        reason: refused.reason,
      }),
    ]);
    expect(doc.pack.contents.guard_refusals.count).toBe(1);
    expect(doc.pack.chain.links.map((l: { entry: string }) => l.entry)).toContain("guard_refusals/0");
    expect(verifyEvidence(text, null)).toMatchObject({ ok: true, unchained: 0 });

    const missing = structuredClone(doc);
    missing.pack.guard_refusals = [];
    expect(verifyEvidence(canonicalJson(missing), null)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("guard_refusals: 0 entries where the pack lists 1 (an entry was removed)"),
    });
    // Changed and signed again by someone else: not what the chain recorded.
    const forger = generateKeyPairSync("ed25519");
    const der = forger.publicKey.export({ format: "der", type: "spki" });
    const edited = structuredClone(doc.pack);
    edited.guard_refusals[0].reason = "allowed";
    edited.contents.guard_refusals.sha256 = digestOf(edited.guard_refusals);
    const forged = {
      ...doc,
      pack: edited,
      signature: {
        algorithm: "Ed25519",
        key_id: keyIdOf(der),
        public_key: der.toString("base64"),
        value: sign(null, Buffer.from(canonicalJson(edited)), forger.privateKey).toString("base64"),
      },
    };
    expect(verifyEvidence(canonicalJson(forged), null)).toMatchObject({
      ok: false,
      reason: "guard_refusals/0: its reason differs from what its chain recorded",
    });
    // A pack made before refusals were carried (no list, no contents entry) still verifies as it was signed.
    const older = structuredClone(doc.pack);
    delete older.guard_refusals;
    delete older.contents.guard_refusals;
    older.chain.links = older.chain.links.filter((l: { entry: string }) => !l.entry.startsWith("guard_refusals/"));
    const olderDoc = {
      ...doc,
      pack: older,
      signature: {
        ...forged.signature,
        value: sign(null, Buffer.from(canonicalJson(older)), forger.privateKey).toString("base64"),
      },
    };
    expect(verifyEvidence(canonicalJson(olderDoc), null)).toMatchObject({ ok: true, trusted: false });
  });
});
