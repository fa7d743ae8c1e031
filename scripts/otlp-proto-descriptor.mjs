// The descriptor of the vendored OTLP trace .proto files, as protobufjs reads them (shared by the
// generator and the test that checks the committed JSON).
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

export const PROTO_ROOT = fileURLToPath(new URL("../lib/otlp/vendor/", import.meta.url));

export function otlpDescriptor() {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => `${PROTO_ROOT}${target}`;
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto");
  root.resolveAll();
  return root.toJSON();
}
