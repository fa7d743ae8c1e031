import { Missing } from "@/components/invocation/missing";

export default function InvocationNotFound() {
  return <Missing kind="invocation" />;
}
