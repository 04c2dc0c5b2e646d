/**
 * A seeder's progress on stderr (stdout is kept for the fixture's JSON line): each phase
 * with its own time and the time so far.
 */
export function phaseTimer(log: (msg: string) => void) {
  const started = Date.now();
  let phaseStarted = started;
  return {
    started,
    phase(msg: string) {
      const now = Date.now();
      log(`${msg} (${((now - phaseStarted) / 1000).toFixed(1)} s; ${((now - started) / 1000).toFixed(1)} s total)`);
      phaseStarted = now;
    },
  };
}
