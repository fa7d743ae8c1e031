import { createSettleClient, SettleError, type Decision, type GuardAnswer, type GuardInput, type InvocationDetail, type SettleRecord } from "@settle/client";
import type { Spool } from "./spool.js";

// The gateway's one way to Settle, through @settle/client. Two clients with
// different patience: the guard and decision reads sit in front of a tool
// call, so they give up after `fastTimeoutMs` with one resend (the caller
// then applies the effect class's fail-closed or fail-open rule); reports
// happen after the answer has gone to the client and may take their time,
// and whatever Settle does not take goes to the spool, never nowhere.

export type Unreachable = { unreachable: true; detail: string };
export const isUnreachable = (v: unknown): v is Unreachable => typeof v === "object" && v !== null && (v as Unreachable).unreachable === true;

export type SettleLink = {
  guard: (input: GuardInput) => Promise<GuardAnswer | Unreachable>;
  getDecision: (invocationId: string) => Promise<Decision | Unreachable>;
  /** Long-polls until `until` holds or `timeoutMs` pass; the last decision read. */
  awaitDecision: (invocationId: string, timeoutMs: number, until: (d: Decision) => boolean) => Promise<Decision | Unreachable>;
  getInvocation: (invocationId: string) => Promise<InvocationDetail | Unreachable>;
  /** Sends the records in the background; those Settle cannot take are spooled. */
  report: (records: SettleRecord[]) => void;
  /** Sends the records now and waits: true once Settle took them, false when they were spooled instead. */
  reportNow: (records: SettleRecord[]) => Promise<boolean>;
  /** Records that go straight to the spool (Settle was just found unreachable). */
  spool: (records: SettleRecord[]) => void;
  /** Waits for every report sent so far, then tries the spool once. */
  flush: () => Promise<void>;
  /** Records in the spool of this process, and reports still on their way. */
  backlog: () => { spooled: number; sending: number };
  close: () => void;
};

export type LinkOptions = {
  url: string;
  key: string;
  spool: Spool;
  fastTimeoutMs: number;
  fetch?: typeof fetch;
  /** How often a non-empty spool is tried again. */
  drainEveryMs?: number;
  onError?: (message: string) => void;
};

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A failure of Settle itself (no answer, 5xx, 429); anything else is a refusal of the request. */
function unreachable(error: unknown): Unreachable {
  return { unreachable: true, detail: describe(error).slice(0, 300) };
}

export function createSettleLink(options: LinkOptions): SettleLink {
  const fetchFn = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  const fast = createSettleClient({ url: options.url, key: options.key, fetch: fetchFn, maxRetries: 1, timeoutMs: options.fastTimeoutMs, pollWaitS: 30 });
  const patient = createSettleClient({ url: options.url, key: options.key, fetch: fetchFn, maxRetries: 2, timeoutMs: 10_000, batchDelayMs: 5 });
  const sending = new Set<Promise<void>>();
  const onError = options.onError ?? (() => {});

  async function send(records: SettleRecord[]): Promise<void> {
    const results = await patient.report(records);
    const rejected = results.filter((r) => r.status === "rejected");
    // A rejected record would be rejected again: it is named, not spooled.
    for (const r of rejected) onError(`Settle rejected record ${r.event_id}: ${r.error?.agent_message ?? "no reason given"}`);
  }

  let draining = false;
  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    try {
      await options.spool.drain(send);
    } catch (error) {
      onError(`spool: ${describe(error)}`);
    } finally {
      draining = false;
    }
  }

  const timer = setInterval(() => void drain(), options.drainEveryMs ?? 2000);
  timer.unref();

  const settle = async <T>(work: () => Promise<T>): Promise<T | Unreachable> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SettleError && error.status !== 0 && error.status < 500 && error.status !== 429) {
        onError(`Settle refused: ${error.message}`);
      }
      return unreachable(error);
    }
  };

  return {
    guard: (input) => settle(() => fast.guard(input)),
    getDecision: (id) => settle(() => fast.getDecision(id)),
    awaitDecision: (id, timeoutMs, until) => settle(() => fast.awaitDecision(id, { timeout: timeoutMs, until })),
    getInvocation: (id) => settle(() => fast.getInvocation(id)),
    report: (records) => {
      const task = send(records).catch((error: unknown) => {
        onError(`report spooled (${records.length} records): ${describe(error)}`);
        options.spool.add(records);
      });
      sending.add(task);
      void task.finally(() => sending.delete(task));
    },
    reportNow: async (records) => {
      try {
        const sent = send(records);
        await patient.flush();
        await sent;
        return true;
      } catch (error) {
        onError(`report spooled (${records.length} records): ${describe(error)}`);
        options.spool.add(records);
        return false;
      }
    },
    spool: (records) => options.spool.add(records),
    flush: async () => {
      await patient.flush();
      await Promise.all([...sending]);
      await drain();
    },
    backlog: () => ({ spooled: options.spool.pending(), sending: sending.size }),
    close: () => clearInterval(timer),
  };
}
