import { Missing } from "@/components/invocation/missing";

export default function TaskNotFound() {
  return <Missing kind="task" />;
}
