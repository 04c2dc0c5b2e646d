import fs from 'node:fs';
import net from 'node:net';

/**
 * The README's shell blocks. ```sh runnable blocks are the walkthrough: run in order in one
 * bash (variables carry over), against a server that a block's `npm start` line starts in the
 * background. Other ```sh blocks need what CI does not have here (a PostgreSQL URL of your
 * own, real Stripe keys) or are what CI already runs (`npm install`, `npm test`): they are
 * only syntax-checked.
 */
export interface ShellBlock {
  line: number;
  runnable: boolean;
  code: string;
}

export function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```sh(?:\s+(\S.*))?$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    blocks.push({ line: i + 1, runnable: (open[2] ?? '').trim() === 'runnable', code: body.join('\n') });
    i = j;
  }
  return blocks;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * One bash script of the runnable blocks: the README's default ports become the test's, `npm
 * start` runs in the background (its own process group, killed on exit) and the script waits
 * until the server is ready. The first `npm run demo` line's output is also kept in
 * `$DATA_DIR/first-demo.txt`, and `afterFirstDemo` runs right after it. `after` runs last,
 * before the server stops.
 */
export function walkthroughScript(blocks: ShellBlock[], o: { port: number; simPort: number; afterFirstDemo: string; after: string }): string {
  const ports = (code: string) =>
    code.replace(/\b(localhost|127\.0\.0\.1):3000\b/g, `$1:${o.port}`).replace(/\b(localhost|127\.0\.0\.1):12111\b/g, `$1:${o.simPort}`);
  const out = [
    'set -euo pipefail',
    'set -m   # background jobs get their own process group, so the server and its children stop together',
    'SERVER_PID=',
    // On a failure, the server's last log lines go with the script's output (the data directory is removed after).
    'stop() { local rc=$?; if [ "$rc" != 0 ] && [ -f "$DATA_DIR/server.log" ]; then echo "== server log (last 40 lines)" >&2; tail -40 "$DATA_DIR/server.log" >&2; fi',
    '  if [ -n "$SERVER_PID" ]; then kill -TERM -- -"$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }',
    'trap stop EXIT',
  ];
  let demoSeen = false;
  for (const block of blocks.filter((b) => b.runnable)) {
    out.push(`echo "== README line ${block.line}" >&2`);
    for (const line of ports(block.code).split('\n')) {
      if (!demoSeen && /^npm run demo\s*$/.test(line)) {
        demoSeen = true;
        // pipefail (above) keeps the demo's exit status.
        out.push(`${line} | tee "$DATA_DIR/first-demo.txt"`, o.afterFirstDemo);
      } else if (/^npm start\b/.test(line)) {
        out.push('npm start > "$DATA_DIR/server.log" 2>&1 &', 'SERVER_PID=$!');
        out.push(`for _ in $(seq 300); do curl -sf localhost:${o.port}/ready > /dev/null && break; sleep 0.2; done`);
        out.push(`curl -sf localhost:${o.port}/ready > /dev/null || { cat "$DATA_DIR/server.log" >&2; exit 1; }`);
      } else out.push(line);
    }
  }
  out.push(o.after);
  return out.join('\n');
}

export const readme = () => fs.readFileSync('README.md', 'utf8');
