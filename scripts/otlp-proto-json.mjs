#!/usr/bin/env node
// Builds lib/otlp/trace-service.json, the protobufjs descriptor Settle
// decodes OTLP trace exports with, from the vendored .proto files (see
// lib/otlp/vendor/README.md). Run after updating them: `node scripts/otlp-proto-json.mjs`.
// lib/otlp/decode.test.ts fails when the committed JSON and the .proto files differ.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { otlpDescriptor } from "./otlp-proto-descriptor.mjs";

const out = fileURLToPath(new URL("../lib/otlp/trace-service.json", import.meta.url));
writeFileSync(out, `${JSON.stringify(otlpDescriptor(), null, 1)}\n`);
console.log(`wrote ${out}`);
