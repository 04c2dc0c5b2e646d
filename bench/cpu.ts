import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux x86-64 and arm64). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time in milliseconds used so far by the processes that `match` selects (by pid or
 * by their command line), read from /proc. Linux only: undefined where /proc is missing.
 * The bench reads it before and after a run to say where the CPU of each request went.
 */
export function cpuMs(match: (pid: number, cmdline: string) => boolean): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const pid of pids) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!match(Number(pid), cmdline)) continue;
      // Fields after the command name (which may hold spaces) start at ") ": utime and stime are 14th and 15th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
