"use client";

import type { ErrorEnvelope } from "@/lib/errors";

// The console's one way to call Settle's API: same-origin fetch with the
// session cookie, JSON in and out, and Settle's error envelope as the error.

export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope | null,
  ) {
    super(envelope?.agent_message ?? `HTTP ${status}`);
  }

  get code(): string {
    return this.envelope?.code ?? `HTTP_${this.status}`;
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { accept: "application/json", ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
    credentials: "same-origin",
  });
  const text = await res.text();
  const body: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const envelope = body && typeof body === "object" && (body as { ok?: unknown }).ok === false ? (body as ErrorEnvelope) : null;
    if (res.status === 401 && typeof window !== "undefined") {
      window.location.assign(`/sign-in?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    }
    throw new ApiClientError(res.status, envelope);
  }
  return body as T;
}
