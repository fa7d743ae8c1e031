import { z } from "zod";
import { stringifyExactJson } from "../json/exact";
import { isSecretKey } from "../redact/secret-keys";

// What a call was and where to check it: a catalog entry's `summary` template ("{{args.amount}}
// {{args.currency}} to {{args.customer}}") and `runbook_url` template. Pure, no I/O: ingest renders the summary
// once per record that carries arguments and the invocation keeps it; the invocation page renders the runbook
// link. Both read the arguments as stored, secrets redacted, so neither can show a secret.
//
// Placeholders: {{args.<path>}} (dots into objects, digits into arrays), {{idempotency_key}}, {{tool}}.
// A summary is plain text: it is shown as text, never as HTML; a value missing from the call shows as "?".
// Every value put into a URL is URL-encoded, and only an http(s) URL is ever rendered.

export const SUMMARY_MAX = 200;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME = /^(tool|idempotency_key|args(\.[A-Za-z0-9_$-]+)+)$/;
const MISSING = "?";

export type TemplateContext = { tool: string; idempotencyKey: string | null; args: unknown };

function placeholdersOf(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

const knownPlaceholders = (template: string) => placeholdersOf(template).every((name) => NAME.test(name));
const placeholderHelp = "placeholders are {{args.<path>}}, {{idempotency_key}} and {{tool}}";

export const summaryTemplateSchema = z
  .string()
  .trim()
  .min(1)
  .max(SUMMARY_MAX)
  .regex(/^[^\p{Cc}]+$/u, "no control characters")
  .refine(knownPlaceholders, placeholderHelp)
  .describe(
    "A one-line description of a call, shown on every queue row: `{{args.amount}} {{args.currency}} to {{args.customer}}`. Plain text; {{args.<path>}}, {{idempotency_key}}, {{tool}}; at most 200 characters.",
  );

/** The template with every placeholder filled, to check its shape without a call. */
const withSample = (template: string) => template.replace(PLACEHOLDER, "x");

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** A call's values may go in the path, query or fragment, never in the scheme or host. */
const fixedHost = (t: string) => !t.includes("{{") || /^https?:\/\/[^/?#{}]+[/?#]/i.test(t.split("{{")[0]!);

export const runbookUrlSchema = z
  .string()
  .trim()
  .max(2000)
  .refine((t) => /^https?:\/\//i.test(t) && isHttpUrl(withSample(t)), "an http(s) URL")
  .refine(knownPlaceholders, placeholderHelp)
  .refine(fixedHost, "the scheme and host are fixed: placeholders only after them")
  .describe(
    "Where to look a call up: `https://dashboard.example.com/refunds?q={{idempotency_key}}`. http(s) only; every value is URL-encoded.",
  );

export const runbookTextSchema = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .describe("Short steps for the person checking by hand (plain text, at most 2,000 characters).");

/** The value at `args.a.b.0`, or undefined. */
function valueAt(args: unknown, path: string[]): unknown {
  let at: unknown = args;
  for (const key of path) {
    if (Array.isArray(at) && /^\d+$/.test(key)) at = at[Number(key)];
    else if (at !== null && typeof at === "object" && !Array.isArray(at))
      at = Object.hasOwn(at, key) ? (at as Record<string, unknown>)[key] : undefined;
    else return undefined;
  }
  return at;
}

function valueOf(name: string, ctx: TemplateContext): string | null {
  if (name === "tool") return ctx.tool;
  if (name === "idempotency_key") return ctx.idempotencyKey;
  const value = valueAt(ctx.args, name.split(".").slice(1));
  if (value === undefined || value === null) return null;
  // An integer past 2^53 (a BigInt, lib/json) with all its digits, alone (String) or inside an object.
  return typeof value === "object" ? stringifyExactJson(value) : String(value);
}

/** One line of plain text: control characters and runs of space made one space, cut at `max` characters. */
export function oneLine(text: string, max = SUMMARY_MAX): string {
  const line = text.replace(/[\p{Cc}\s]+/gu, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The summary a template gives this call. */
export function renderSummary(template: string, ctx: TemplateContext): string {
  return oneLine(template.replace(PLACEHOLDER, (_, name: string) => valueOf(name, ctx) ?? MISSING));
}

const SCALARS_SHOWN = 4;

/**
 * Without a template: the first few scalar arguments, `amount 1200 · currency EUR · customer cus_9`; null with
 * none. An argument whose name looks secret is never one of them, redacted or not: the summary goes to every
 * queue row, Slack and email.
 */
export function defaultSummary(args: unknown): string | null {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return null;
  const parts: string[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (parts.length === SCALARS_SHOWN) break;
    if (value === null || typeof value === "object" || isSecretKey(name)) continue;
    parts.push(`${name} ${String(value)}`);
  }
  return parts.length === 0 ? null : oneLine(parts.join(" · "));
}

/** The call's summary: its entry's template, else its first scalar arguments; null when it has neither. */
export function summarize(template: string | null | undefined, ctx: TemplateContext): string | null {
  if (template) return renderSummary(template, ctx);
  return defaultSummary(ctx.args);
}

/** The runbook link for this call, every value URL-encoded; null unless it renders to an http(s) URL. */
export function renderRunbookUrl(template: string, ctx: TemplateContext): { url: string; host: string } | null {
  const text = template.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(valueOf(name, ctx) ?? ""));
  if (!isHttpUrl(text)) return null;
  const url = new URL(text);
  return { url: url.toString(), host: url.host };
}
