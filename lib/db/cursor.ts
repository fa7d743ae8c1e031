import { storableIso } from "./storable";

// Keyset cursors of the lists that page by (time, uuid): opaque to callers,
// and checked on the way back in, so a cursor Settle did not hand out is a
// typed 400, never a query the database refuses.

export type TimeIdCursor = { at: Date; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const encodeTimeIdCursor = (at: Date, id: string) =>
  Buffer.from(`${at.toISOString()}|${id}`, "utf8").toString("base64url");

/** The cursor's time and id, or null when it is not one encodeTimeIdCursor made (or names a time Settle never stores). */
export function decodeTimeIdCursor(text: string): TimeIdCursor | null {
  const parts = Buffer.from(text, "base64url").toString("utf8").split("|");
  if (parts.length !== 2) return null;
  const [at, id] = parts as [string, string];
  const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(at) ? storableIso(Date.parse(at)) : null;
  return iso && UUID.test(id) ? { at: new Date(iso), id } : null;
}

export const NOT_A_CURSOR =
  "not a cursor from this API: pass next_cursor as it was given, or leave it out to start again";
