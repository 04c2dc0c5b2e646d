#!/usr/bin/env bash
# Starts the bench's Ghost (installed by bench/ghost/setup.sh in $BENCH_GHOST_DIR) in the
# background, production mode, and waits until its Admin API answers. Its pid goes to ghost.pid,
# its stdout/stderr to ghost.log (Ghost's own logs, level error, are in content/logs/).
set -euo pipefail
DIR="${BENCH_GHOST_DIR:-$HOME/.cache/tribes-bench-ghost}"
DIR="$(cd "$DIR" 2>/dev/null && pwd)" || { echo "no Ghost install in $DIR: run bash bench/ghost/setup.sh first" >&2; exit 1; }
cd "$DIR"
if [ ! -f current/index.js ] || [ ! -f config.production.json ]; then
  echo "Ghost is not (fully) installed in $DIR: run bash bench/ghost/setup.sh" >&2; exit 1
fi
# A pid from ghost.pid that still is this install's Ghost (pids get reused).
is_ghost() { case "$(ps -p "$1" -o args= 2>/dev/null || true)" in *"$DIR/current/index.js"*) return 0 ;; *) return 1 ;; esac; }
if [ -f ghost.pid ] && is_ghost "$(cat ghost.pid)"; then
  echo "Ghost already running (pid $(cat ghost.pid))"; exit 0
fi
URL="$(node -p 'require(process.argv[1]).url.replace(/\/+$/, "")' "$DIR/config.production.json")"
PROBE="$URL/ghost/api/admin/site/"
# Something else on the port would answer the readiness probe in Ghost's place.
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$PROBE" || true)" != "000" ]; then
  echo "something already answers on $URL (not the Ghost of $DIR/ghost.pid): stop it first" >&2; exit 1
fi
# Ghost reads config.production.json from its working directory.
NODE_ENV=production nohup node "$DIR/current/index.js" > "$DIR/ghost.log" 2>&1 &
echo $! > ghost.pid
# The first start creates the schema (migrations): up to a few minutes.
for i in $(seq 1 600); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "$PROBE" || true)" = "200" ]; then
    echo "Ghost up on $URL (pid $(cat ghost.pid)) after ~$((i / 2)) s"; exit 0
  fi
  if ! kill -0 "$(cat ghost.pid)" 2>/dev/null; then
    echo "Ghost exited; see $DIR/ghost.log and $DIR/content/logs/" >&2; rm -f ghost.pid; exit 1
  fi
  sleep 0.5
done
echo "Ghost did not answer in 300 s; see $DIR/ghost.log (still running: bash bench/ghost/stop.sh)" >&2; exit 1
