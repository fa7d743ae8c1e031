// Runs once when the server starts (next dev / next start). NEXT_RUNTIME is
// inlined at build time, which is what keeps the Node-only database code out
// of the edge bundle; everything else reads settings through lib/env.ts.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startServer } = await import("./lib/server-start");
    // The runtime's hot routes, for bin/settle-server.mjs to serve without Next.js's pipeline (decision 024).
    const { registerFastLane } = await import("./server/fast-lane");
    registerFastLane();
    // Its timeouts and connection cap, from Settle's settings (decision 025).
    const { registerServerLimits } = await import("./server/server-limits");
    registerServerLimits();
    await startServer();
  }
}
