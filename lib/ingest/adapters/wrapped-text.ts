import { isRecord } from "./shared";

// Wrappers carry their payload as text. A text that is a JSON object may hold
// a known dialect; anything else stays text and is never read for meaning.

const MAX_MESSAGE = 4000;

export function parseJsonObject(value: unknown): Record<string, unknown> | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  if (!trimmed.startsWith("{")) return null;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Text parts of a content list (MCP content[], Anthropic blocks, OpenAI output parts) or a plain string. */
export function textParts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content
    .filter(isRecord)
    .map((part) => part.text)
    .filter((t): t is string => typeof t === "string");
}

export function firstText(content: unknown): string | null {
  const joined = textParts(content).join("\n");
  if (!joined) return null;
  return joined.length > MAX_MESSAGE ? `${joined.slice(0, MAX_MESSAGE)}…` : joined;
}

export function jsonCandidates(content: unknown): Record<string, unknown>[] {
  return textParts(content)
    .map(parseJsonObject)
    .filter((v): v is Record<string, unknown> => v !== null);
}
