import { otelGenaiAdapter } from "./genai";
import { otelOpeninferenceAdapter } from "./openinference";
import { otelVercelAiAdapter } from "./vercel-ai";
import type { SpanAdapter } from "../span-records";

// The OpenTelemetry conventions OTLP ingest reads tool calls in, beside the
// envelope dialects (lib/ingest/adapters): each names the dialect its attempts show.
// Their markers do not overlap; the first that claims a span reads it.
export const spanAdapters: SpanAdapter[] = [otelGenaiAdapter, otelVercelAiAdapter, otelOpeninferenceAdapter];

export { spanRecords, type SpanOptions, type SpanRecord } from "../span-records";
