#!/usr/bin/env bash
# Stops the Ghost that bench/ghost/start.sh started (SIGTERM, SIGKILL after 10 s).
set -euo pipefail
DIR="${BENCH_GHOST_DIR:-$HOME/.cache/tribes-bench-ghost}"
DIR="$(cd "$DIR" 2>/dev/null && pwd)" || { echo "Ghost not running (no $DIR)"; exit 0; }
PIDFILE="$DIR/ghost.pid"
# A pid from ghost.pid that still is this install's Ghost (pids get reused).
is_ghost() { case "$(ps -p "$1" -o args= 2>/dev/null || true)" in *"$DIR/current/index.js"*) return 0 ;; *) return 1 ;; esac; }
if [ -f "$PIDFILE" ] && is_ghost "$(cat "$PIDFILE")"; then
  pid="$(cat "$PIDFILE")"
  kill "$pid"
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  echo "Ghost stopped (pid $pid)"
else
  echo "Ghost not running"
fi
rm -f "$PIDFILE"
