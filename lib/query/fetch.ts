"use client";

import type { ErrorEnvelope } from "@/lib/errors";
import { parseExactJson } from "@/lib/json/exact";

// How the console's typed client (components/api.ts) sends a request:
// same-origin fetch with the session cookie, JSON back, and a 401 sends the
// person to sign-in. Its failures become ApiClientError, carrying Settle's
// error envelope, so a component shows the envelope's message.

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

/** One request as the typed client hands it over; `path` carries the query string. */
export type ApiFetchRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
};

export async function fetchApi(request: ApiFetchRequest): Promise<{ status: number; body: unknown }> {
  const res = await fetch(request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    credentials: "same-origin",
  });
  const text = await res.text();
  // Exactly: a caller's integer past 2^53 (an order number, an amount) reaches the person with every digit (lib/json).
  const body: unknown = text ? parseExactJson(text) : null;
  if (res.status === 401 && typeof window !== "undefined") {
    window.location.assign(`/sign-in?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  }
  return { status: res.status, body };
}

/** The error a failed call throws: its status, and Settle's error envelope when the body is one. */
export function apiClientError({ status, error }: { status: number; error: ErrorEnvelope | null }): ApiClientError {
  return new ApiClientError(status, error);
}
