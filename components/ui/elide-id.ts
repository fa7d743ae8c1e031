// What a person reads of a long id: its head and its tail around an ellipsis. The MCP gateway's invocation ids
// (task id, idempotency key and a suffix of its own) run past 100 characters; the head names the task, the tail tells
// two calls of one task apart. The id itself is unchanged in URLs, the API and the title/copy of what shows it.

export const ID_HEAD = 24;
export const ID_TAIL = 12;
/** The head where the column is narrow (the queue's): with the tail, 21 characters. */
export const SHORT_HEAD = 8;

/** `id` as shown: whole when it is at most head + tail + 1 characters, else its head, "…" and its tail. */
export function elideId(id: string, head = ID_HEAD, tail = ID_TAIL): string {
  const chars = Array.from(id); // by code point: an emoji in a task id is not cut in half
  if (chars.length <= head + tail + 1) return id;
  return `${chars.slice(0, head).join("")}…${chars.slice(chars.length - tail).join("")}`;
}
