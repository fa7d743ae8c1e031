import { anthropicAdapter } from "./anthropic";
import { mcpAdapter } from "./mcp";
import { openaiAdapter } from "./openai";
import { rfc9457Adapter } from "./rfc9457";
import { seed001Adapter } from "./seed001";
import { seed002Adapter } from "./seed002";
import { seed003Adapter } from "./seed003";
import { seed004Adapter } from "./seed004";
import { settleAdapter } from "./settle";
import type { DialectAdapter, WrapperAdapter } from "./shared";

// Order matters where shapes overlap: the most specific markers first
// (settle's ok+commit_state, source article 003 (docs/outcome-model.md)'s kind) and RFC 9457's loose shape last.
export const leafAdapters: DialectAdapter[] = [
  settleAdapter,
  seed003Adapter,
  seed002Adapter,
  seed001Adapter,
  seed004Adapter,
  rfc9457Adapter,
];

export const wrapperAdapters: WrapperAdapter[] = [anthropicAdapter, openaiAdapter, mcpAdapter];

export { normalizeUnrecognized } from "./unrecognized";
export type { AdapterContext } from "./shared";
