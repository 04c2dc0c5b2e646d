/**
 * What every bench reads from its environment and how it ends: numbers with defaults, lists of
 * client counts, the BENCH_SCENARIOS filter, and an exit code of 1 on any error (a run with a
 * non-2xx answer throws after printing its report).
 */
export const env = process.env;

export const int = (name: string, fallback: number): number => Number(env[name] ?? fallback);

/** A switch: on when set to anything but empty, 0, false or no (BENCH_IDEMPOTENCY=0 is off, not on). */
export const flag = (name: string): boolean => !['', '0', 'false', 'no'].includes((env[name] ?? '').trim().toLowerCase());

/** A comma-separated list of numbers, e.g. BENCH_CONNECTIONS=1,4,16. */
export const counts = (name: string, fallback: string): number[] => (env[name] ?? fallback).split(',').map((s) => Number(s.trim()));

/** The scenarios BENCH_SCENARIOS names, or undefined for all of them. */
export const onlyScenarios = (): Set<string> | undefined => (env.BENCH_SCENARIOS ? new Set(env.BENCH_SCENARIOS.split(',').map((s) => s.trim())) : undefined);

export function runBench(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
