import { otelGenaiAdapter } from "./otel-genai";
import { otelOpeninferenceAdapter } from "./otel-openinference";
import { otelVercelAiAdapter } from "./otel-vercel-ai";
import type { SpanAdapter } from "./otel-shared";

// The OpenTelemetry conventions OTLP ingest reads tool calls in, beside the
// envelope dialects (./index.ts): each names the dialect its attempts show.
// Their markers do not overlap; the first that claims a span reads it.
export const spanAdapters: SpanAdapter[] = [otelGenaiAdapter, otelVercelAiAdapter, otelOpeninferenceAdapter];

export { spanRecords, type SpanOptions, type SpanRecord } from "./otel-shared";
