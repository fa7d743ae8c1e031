export { createSettleClient, type ClientOptions, type SettleClient } from "./client.js";
export {
  classifyResult,
  probeEnvelope,
  type CallResult,
  type ClassifyContext,
  type ProbeFinding,
  type Seed002Envelope,
} from "./classify.js";
export type { AwaitDecisionOptions } from "./decisions.js";
export { SettleError, isErrorEnvelope } from "./errors.js";
export type { FetchLike } from "./http.js";
export type { ToolCall, ToolRun, ToolRunStatus, WrapToolOptions } from "./wrap-tool.js";
export type {
  Finding,
  ServeEvent,
  ServeOptions,
  TakeOptions,
  VerificationAnswer,
  VerificationItem,
  Verifier,
} from "./verifier.js";
export type * from "./types.js";
export {
  commitStates,
  decisionKinds,
  effectClasses,
  guardReasons,
  phases,
  recordStatuses,
  retryDirectives,
} from "./types.js";
