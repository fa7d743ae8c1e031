import { mkdirSync } from "node:fs";
import path from "node:path";
import { startSettle, STATE_FILE, writeState } from "./server";

export default async function globalSetup() {
  mkdirSync(path.dirname(STATE_FILE), { recursive: true });
  const { state } = await startSettle();
  writeState(state);
}
