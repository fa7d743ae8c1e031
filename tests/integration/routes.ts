export { POST as ingest } from "@/app/api/v1/envelopes/route";
export { GET as getInvocation } from "@/app/api/v1/invocations/[invocation_id]/route";
export { GET as listInvocations } from "@/app/api/v1/invocations/route";
export { GET as getTask } from "@/app/api/v1/tasks/[task_id]/route";
export { GET as health } from "@/app/api/health/route";
export { GET as openapi } from "@/app/api/v1/openapi.json/route";
export { POST as guard } from "@/app/api/v1/guard/route";
export { GET as getDecision } from "@/app/api/v1/invocations/[invocation_id]/decision/route";
