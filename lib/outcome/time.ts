// Epoch milliseconds as ISO 8601 text, on the write path's hot loops (every
// record's `at`, its retry time, the fold's first and last times). One Date
// re-pointed with setTime rather than `new Date(ms)`: in the server Next.js
// wraps the Date constructor (node-environment-extensions/date.js, to notice
// clock reads while prerendering), which doubles what each construction costs.

const scratch = new Date(0);

/** `new Date(ms).toISOString()`, the same text and the same RangeError for a time out of range. */
export function isoOfMs(ms: number): string {
  scratch.setTime(ms);
  return scratch.toISOString();
}
