import type { ToolAnnotations } from "./effects.js";

// What the server said about its tools, read from the tools/list answers
// passing through the gateway: the annotations that serve as effect-class
// defaults. Nothing is asked of the server for it.

export type ToolCatalog = {
  annotations: (tool: string) => ToolAnnotations | undefined;
  /** Reads a tools/list result; anything else is ignored. */
  learn: (result: unknown) => void;
};

export function createToolCatalog(): ToolCatalog {
  const annotations = new Map<string, ToolAnnotations>();
  return {
    annotations: (tool) => annotations.get(tool),
    learn: (result) => {
      const tools = (result as { tools?: unknown } | null)?.tools;
      if (!Array.isArray(tools)) return;
      for (const tool of tools) {
        if (typeof tool?.name !== "string") continue;
        const a = tool.annotations;
        if (a && typeof a === "object") annotations.set(tool.name, a as ToolAnnotations);
      }
    },
  };
}
