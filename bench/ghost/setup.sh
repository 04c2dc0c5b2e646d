#!/usr/bin/env bash
# Installs Ghost 5.130.6 for `npm run bench:ghost` (bench/side-by-side.ts), idempotently: every
# step is skipped when already done, so rerunning it only checks. See bench/ghost/README.md.
#
#   bash bench/ghost/setup.sh
#
# Install dir: $BENCH_GHOST_DIR (default ~/.cache/tribes-bench-ghost, outside the repo).
# Needs node and npm, curl, tar, and a MariaDB or MySQL server (BENCH_GHOST_MYSQL_*).
set -euo pipefail

GHOST_VERSION=5.130.6
YARN_VERSION=1.22.22
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export BENCH_GHOST_DIR="${BENCH_GHOST_DIR:-$HOME/.cache/tribes-bench-ghost}"
export BENCH_GHOST_PORT="${BENCH_GHOST_PORT:-2368}"
export BENCH_GHOST_MYSQL_HOST="${BENCH_GHOST_MYSQL_HOST:-127.0.0.1}"
export BENCH_GHOST_MYSQL_PORT="${BENCH_GHOST_MYSQL_PORT:-3306}"
export BENCH_GHOST_MYSQL_USER="${BENCH_GHOST_MYSQL_USER:-root}"
export BENCH_GHOST_MYSQL_PASSWORD="${BENCH_GHOST_MYSQL_PASSWORD:-}"
export BENCH_GHOST_MYSQL_DATABASE="${BENCH_GHOST_MYSQL_DATABASE:-ghost_bench}"
export BENCH_GHOST_MEMBERS="${BENCH_GHOST_MEMBERS:-10000}"

say() { printf '[ghost setup] %s\n' "$*"; }
die() { printf '[ghost setup] error: %s\n' "$*" >&2; exit 1; }

for cmd in node npm curl tar; do command -v "$cmd" >/dev/null || die "$cmd not found"; done

# The database server first: no use installing for minutes without one.
TIMEOUT=(); if command -v timeout >/dev/null; then TIMEOUT=(timeout 5); fi
if ! ${TIMEOUT[@]+"${TIMEOUT[@]}"} bash -c ": > /dev/tcp/$BENCH_GHOST_MYSQL_HOST/$BENCH_GHOST_MYSQL_PORT" 2>/dev/null; then
  die "no MariaDB/MySQL server reachable at $BENCH_GHOST_MYSQL_HOST:$BENCH_GHOST_MYSQL_PORT. Ghost needs one:
  start it (e.g. sudo service mariadb start; or apt-get install mariadb-server), or point
  BENCH_GHOST_MYSQL_HOST / _PORT / _USER / _PASSWORD at one (the user must be allowed to create a database)."
fi

mkdir -p "$BENCH_GHOST_DIR"
DIR="$(cd "$BENCH_GHOST_DIR" && pwd)"
export BENCH_GHOST_DIR="$DIR"
GHOST="$DIR/versions/$GHOST_VERSION"
TGZ="$DIR/ghost-$GHOST_VERSION.tgz"
YARN="$DIR/tools/node_modules/.bin/yarn"
REGISTRY="$(npm config get registry)"
REGISTRY="${REGISTRY%/}/"
say "install dir $DIR (Ghost $GHOST_VERSION, port $BENCH_GHOST_PORT, database $BENCH_GHOST_MYSQL_DATABASE on $BENCH_GHOST_MYSQL_HOST:$BENCH_GHOST_MYSQL_PORT, $BENCH_GHOST_MEMBERS members)"

TMP=""
STARTED=""
cleanup() {
  [ -n "$TMP" ] && rm -rf "$TMP"
  if [ -n "$STARTED" ]; then bash "$HERE/stop.sh" | sed 's/^/[ghost setup] /'; fi
}
trap cleanup EXIT

# 1. The npm package, unpacked in versions/<version>, `current` pointing at it.
if [ -f "$GHOST/package.json" ]; then
  say "1/9 Ghost $GHOST_VERSION unpacked in $GHOST: already done"
else
  if [ -f "$TGZ" ]; then
    say "1/9 $TGZ: already downloaded"
  else
    say "1/9 downloading ghost@$GHOST_VERSION (npm pack, ~22 MB)"
    TMP="$(mktemp -d "$DIR/.download.XXXXXX")"
    (cd "$TMP" && npm pack "ghost@$GHOST_VERSION" --pack-destination "$TMP" --loglevel=warn >/dev/null)
    mv "$TMP/ghost-$GHOST_VERSION.tgz" "$TGZ"
    rm -rf "$TMP"; TMP=""
  fi
  mkdir -p "$DIR/versions"
  TMP="$(mktemp -d "$DIR/versions/.unpack.XXXXXX")"
  tar xzf "$TGZ" -C "$TMP"
  mv "$TMP/package" "$GHOST"
  rm -rf "$TMP"; TMP=""
  say "1/9 unpacked into $GHOST"
fi
if [ "$(readlink "$DIR/current" || true)" != "versions/$GHOST_VERSION" ]; then
  ln -sfn "versions/$GHOST_VERSION" "$DIR/current"
  say "    $DIR/current -> versions/$GHOST_VERSION"
fi

# 2. No devDependencies: yarn 1 fetches them even with --production, and some (admin and test
#    tools only) resolve to GitHub tarballs, which may be unreachable. The original package.json
#    is kept as package.json.orig. yarn.lock's registry.yarnpkg.com URLs go to npm's registry.
if [ -f "$GHOST/package.json.orig" ] && node -e 'process.exit(require(process.argv[1]).devDependencies ? 1 : 0)' "$GHOST/package.json"; then
  say "2/9 devDependencies removed from package.json: already done"
else
  [ -f "$GHOST/package.json.orig" ] || cp "$GHOST/package.json" "$GHOST/package.json.orig"
  node -e '
    const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f, "utf8"));
    console.log(`[ghost setup] 2/9 removing ${Object.keys(p.devDependencies || {}).length} devDependencies from package.json (original in package.json.orig)`);
    delete p.devDependencies;
    fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");' "$GHOST/package.json"
fi
if grep -q 'https://registry.yarnpkg.com/' "$GHOST/yarn.lock"; then
  sed -i.bak "s#https://registry.yarnpkg.com/#$REGISTRY#g" "$GHOST/yarn.lock" && rm -f "$GHOST/yarn.lock.bak"
  say "    yarn.lock: registry.yarnpkg.com -> $REGISTRY"
fi

# 3. yarn 1, local to the install dir (what ghost-cli installs Ghost with).
if [ -x "$YARN" ] && [ "$("$YARN" --version 2>/dev/null || true)" = "$YARN_VERSION" ]; then
  say "3/9 yarn $YARN_VERSION in $DIR/tools: already there"
else
  say "3/9 installing yarn $YARN_VERSION into $DIR/tools"
  mkdir -p "$DIR/tools"
  [ -f "$DIR/tools/package.json" ] || echo '{ "name": "ghost-bench-tools", "private": true }' > "$DIR/tools/package.json"
  npm install --prefix "$DIR/tools" --no-audit --no-fund --save-exact --ignore-scripts --loglevel=warn "yarn@$YARN_VERSION"
fi

# 4. Ghost's dependencies, the exact versions of its yarn.lock, production only (~600 MB).
if [ -f "$GHOST/node_modules/.yarn-integrity" ] && (cd "$GHOST" && "$YARN" check --integrity --production >/dev/null 2>&1); then
  say "4/9 Ghost's dependencies: already installed (yarn check --integrity passes)"
else
  say "4/9 installing Ghost's dependencies with yarn (production, from its yarn.lock): several minutes"
  # Native modules (sqlite3, optional and unused here) build against the local node headers
  # when they match this node, instead of downloading them.
  if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node_version.h ] \
    && [ "v$(awk '/define NODE_(MAJOR|MINOR|PATCH)_VERSION/ { printf "%s%s", sep, $3; sep = "." }' /usr/include/node/node_version.h)" = "$(node -v)" ]; then
    export npm_config_nodedir=/usr
  fi
  (cd "$GHOST" && "$YARN" install --production --non-interactive --network-timeout 600000 \
    --registry "$REGISTRY" --cache-folder "$DIR/.yarn-cache")
  node -e 'for (const m of ["knex", "mysql2", "@faker-js/faker"]) require.resolve(m, { paths: [process.argv[1]] })' "$GHOST" \
    || die "yarn finished but Ghost's dependencies are incomplete"
  say "4/9 dependencies installed ($(du -sh "$GHOST/node_modules" | cut -f1))"
fi

# 5. config.production.json (MariaDB, port, quiet file logs, mail stub, no device verification)
#    and the content dir (Ghost's skeleton).
if [ ! -d "$DIR/content" ]; then
  cp -R "$GHOST/content" "$DIR/content"
  say "5/9 content dir copied from Ghost's skeleton"
fi
node "$HERE/setup-steps.mjs" config 5/9

# 6. The database (Ghost creates its tables on first start).
node "$HERE/setup-steps.mjs" database 6/9

# 7. Ghost up (stopped again at the end, unless it already ran).
if [ -f "$DIR/ghost.pid" ] && case "$(ps -p "$(cat "$DIR/ghost.pid")" -o args= 2>/dev/null || true)" in *"$DIR/current/index.js"*) true ;; *) false ;; esac; then
  say "7/9 Ghost already running (pid $(cat "$DIR/ghost.pid")); left running"
else
  STARTED=1
  say "7/9 starting Ghost (the first start creates the schema: a minute or two)"
  bash "$HERE/start.sh" | sed 's/^/[ghost setup]     /'
fi

# 8. The owner, and the "Bench" integration whose Admin API key the bench signs its JWTs with.
node "$HERE/setup-steps.mjs" owner 8/9
node "$HERE/setup-steps.mjs" key 8/9

# 9. The members, by Ghost's CSV import, reproducibly (fixed faker seed); then total = N checked.
node "$HERE/setup-steps.mjs" members 9/9

say "done: Ghost $GHOST_VERSION in $DIR with $BENCH_GHOST_MEMBERS members. Now: BENCH_DB=<kept Tribes bench database> npm run bench:ghost"
