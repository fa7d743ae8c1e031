import { mkdirSync } from "node:fs";
import path from "node:path";
import { startConsole, startEmbedded, STATE_FILE, writeState } from "./server";

export default async function globalSetup() {
  mkdirSync(path.dirname(STATE_FILE), { recursive: true });
  const [embedded, consoleServer] = await Promise.all([startEmbedded(), startConsole()]);
  writeState({ embedded, console: consoleServer });
}
