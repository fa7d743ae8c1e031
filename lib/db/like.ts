/** A LIKE pattern that matches `text` anywhere in a value: its own %, _ and \ are matched as themselves. */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
