// The settle-hook command (bin/settle-hook.mjs runs the built copy).
import { main } from "./cli.js";

await main();
