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
export { connectionBroke, type FetchLike } from "./http.js";
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
  createGate,
  type CallInfo,
  type Gate,
  type GateCall,
  type GateContext,
  type GateOptions,
  type GateResult,
  type HeldAnswer,
  type Identity,
} from "./gate/gate.js";
export { approvalFor, awaitApproval, type ApprovalAnswer } from "./gate/approvals.js";
export type { Probe } from "./gate/probe.js";
export { decisionFields, type ApprovalState, type DecisionFields } from "./gate/decision.js";
export { answerFor, formatAge, type Answer, type AnswerFacts, type AnswerKind } from "./gate/sentences.js";
export { classifyCall, failureSignal, isKnownEnvelope } from "./gate/signals.js";
export { canonicalJson, defaultIdempotencyKey, effectFromCatalog, matchesPattern } from "./gate/identity.js";
export {
  commitStates,
  decisionKinds,
  effectClasses,
  guardReasons,
  phases,
  recordStatuses,
  retryDirectives,
} from "./types.js";
