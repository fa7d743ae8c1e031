export function runPrisma(
  args: string[],
  options?: { cwd?: string; env?: Record<string, string>; inherit?: boolean },
): Promise<{ code: number; stdout: string; stderr: string }>;
export function createTempDatabase(
  prefix: string,
  env?: Record<string, string | undefined>,
): Promise<{ name: string; url: string; drop: () => Promise<void> }>;
