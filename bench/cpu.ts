import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux x86-64 and arm64). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time in milliseconds used so far by the processes that `match` selects (by pid or
 * by their command line), read from /proc. Linux only: undefined where /proc is missing.
 * The bench reads it before and after a run to say where the CPU of each request went.
 */
export function cpuMs(match: (pid: number, cmdline: string) => boolean): number | undefined {
  const byPid = cpuTicks(match);
  if (!byPid) return undefined;
  let ticks = 0;
  for (const t of byPid.values()) ticks += t;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * A running total of the CPU (ms) the processes `match` selects used since the counter was
 * made, that never goes backwards: a process that exits keeps what it was last seen using
 * (a plain sum of the live ones would drop by all of it, as when a pool closes an idle
 * PostgreSQL connection mid-run), and one that starts counts from zero.
 */
export function cpuCounter(match: (pid: number, cmdline: string) => boolean): () => number | undefined {
  const start = cpuTicks(match);
  const baseline = new Map(start ?? []);
  const last = new Map(start ?? []);
  return () => {
    const now = cpuTicks(match);
    if (!now) return undefined;
    for (const [pid, t] of now) last.set(pid, t);
    let ticks = 0;
    for (const [pid, t] of last) ticks += t - (baseline.get(pid) ?? 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  };
}

/** Clock ticks used so far per selected process (pids are reused rarely enough for a bench run). */
function cpuTicks(match: (pid: number, cmdline: string) => boolean): Map<number, number> | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  const ticks = new Map<number, number>();
  for (const pid of pids) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!match(Number(pid), cmdline)) continue;
      // Fields after the command name (which may hold spaces) start at ") ": utime and stime are 14th and 15th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(pid), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks;
}
