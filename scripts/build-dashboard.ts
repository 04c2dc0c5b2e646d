import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';
import { DASHBOARD_DIST, PROJECT_ROOT } from '../src/paths.js';

/**
 * Builds the creator's dashboard (dashboard/) into dist/dashboard/: one script and one
 * stylesheet, content-hashed so the server can cache them forever, each beside its gzip, and
 * index.html naming them. The whole first load must stay within BUDGET_GZIP_BYTES (issue #29):
 * over it, the build fails rather than ship it.
 */
export const DASHBOARD_SOURCE = path.join(PROJECT_ROOT, 'dashboard');
export const DASHBOARD_OUT = DASHBOARD_DIST;
export const BUDGET_GZIP_BYTES = 100 * 1024;

const options = (outdir: string): esbuild.BuildOptions => ({
  entryPoints: [path.join(DASHBOARD_SOURCE, 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: path.join(outdir, 'assets'),
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
});

export interface DashboardBuild {
  files: Array<{ name: string; bytes: number; gzipBytes: number }>;
  gzipTotal: number;
}

/** Writes index.html for the built assets and a .gz beside each asset; checks the budget. */
function finish(outdir: string, result: esbuild.BuildResult): DashboardBuild {
  const outputs = Object.keys(result.metafile!.outputs).map((f) => path.resolve(PROJECT_ROOT, f));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error('the dashboard build made no script or no stylesheet');
  const template = fs.readFileSync(path.join(DASHBOARD_SOURCE, 'index.html'), 'utf8');
  const html = template.replace('%SCRIPT%', `assets/${path.basename(js)}`).replace('%STYLES%', `assets/${path.basename(css)}`);
  fs.writeFileSync(path.join(outdir, 'index.html'), html);
  const files = [js, css].map((file) => {
    const body = fs.readFileSync(file);
    const gzip = zlib.gzipSync(body, { level: 9 });
    fs.writeFileSync(`${file}.gz`, gzip);
    return { name: path.basename(file), bytes: body.length, gzipBytes: gzip.length };
  });
  const gzipTotal = files.reduce((n, f) => n + f.gzipBytes, 0) + zlib.gzipSync(html).length;
  if (gzipTotal > BUDGET_GZIP_BYTES) {
    throw new Error(`the dashboard's first load is ${(gzipTotal / 1024).toFixed(1)} KB gzipped, over its budget of ${BUDGET_GZIP_BYTES / 1024} KB`);
  }
  return { files, gzipTotal };
}

/** A clean build (the folder is emptied first, so no stale hashed asset is left behind). */
export async function buildDashboard(outdir = DASHBOARD_OUT): Promise<DashboardBuild> {
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.mkdirSync(outdir, { recursive: true });
  return finish(outdir, await esbuild.build(options(outdir)));
}

/** npm run dev: rebuilds on every change of dashboard/ (the server reads the files per request). */
export async function watchDashboard(outdir = DASHBOARD_OUT): Promise<void> {
  fs.mkdirSync(outdir, { recursive: true });
  const ctx = await esbuild.context({
    ...options(outdir),
    plugins: [
      {
        name: 'dashboard-index',
        setup(build) {
          build.onEnd((result) => {
            if (result.errors.length > 0 || !result.metafile) return;
            try {
              const built = finish(outdir, result);
              console.log(`dashboard rebuilt: ${(built.gzipTotal / 1024).toFixed(1)} KB gzipped`);
            } catch (err) {
              console.error(String(err));
            }
          });
        },
      },
    ],
  });
  await ctx.watch();
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  if (process.argv.includes('--watch')) {
    await watchDashboard();
  } else {
    const built = await buildDashboard();
    if (process.argv.includes('--report')) {
      for (const f of built.files) console.log(`${f.name}: ${(f.bytes / 1024).toFixed(1)} KB, ${(f.gzipBytes / 1024).toFixed(1)} KB gzipped`);
      console.log(`first load: ${(built.gzipTotal / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_GZIP_BYTES / 1024} KB)`);
    }
  }
}
