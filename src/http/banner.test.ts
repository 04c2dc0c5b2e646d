import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging.js';
import { announce, bannerLines, originOf } from './banner.js';

const simulated = { origin: 'http://127.0.0.1:3000', simulatorUrl: 'http://127.0.0.1:12111', adminTokenFile: '/srv/tribes/data/admin-token' };

function capture() {
  const chunks: string[] = [];
  return { chunks, out: { write: (text: string) => void chunks.push(text) } };
}

describe('the start-up banner', () => {
  it('says where the API, its docs, the dashboard, the simulator and the admin token file are, in plain lines', () => {
    expect(bannerLines(simulated)).toEqual([
      '',
      'Tribes is ready.',
      '  API                  http://127.0.0.1:3000/api/v1',
      '  API docs             http://127.0.0.1:3000/docs',
      '  Dashboard            http://127.0.0.1:3000/dashboard/ (sign in with a link: npm run cli -- creators login-link --email ...)',
      '  Processor simulator  http://127.0.0.1:12111 (Stripe-compatible; hosted checkout pages, test helpers)',
      '  Admin token          in /srv/tribes/data/admin-token (the CLI reads it from there)',
      '',
    ]);
  });

  it('names no simulator with real Stripe, and ADMIN_TOKEN when the token came from it', () => {
    const lines = bannerLines({ origin: 'http://10.0.0.5:8080', simulatorUrl: undefined, adminTokenFile: undefined });
    expect(lines.join('\n')).not.toMatch(/simulator/i);
    expect(lines).toContain('  Admin token  from ADMIN_TOKEN');
    expect(lines).toContain('  API          http://10.0.0.5:8080/api/v1');
  });

  it('is one structured log line in JSON mode, and plain text with no log prefix in pretty mode', async () => {
    const json = capture();
    const pretty = capture();
    const logger = await createLogger({ level: 'info', format: 'json', destination: json.out });
    announce(simulated, 'json', logger, pretty.out);
    expect(pretty.chunks).toEqual([]);
    expect(JSON.parse(json.chunks.join(''))).toMatchObject({
      msg: 'tribes ready',
      api: 'http://127.0.0.1:3000/api/v1',
      docs: 'http://127.0.0.1:3000/docs',
      dashboard: 'http://127.0.0.1:3000/dashboard/',
      processor_simulator: 'http://127.0.0.1:12111',
      admin_token_source: '/srv/tribes/data/admin-token',
    });

    json.chunks.length = 0;
    announce(simulated, 'pretty', logger, pretty.out);
    expect(json.chunks).toEqual([]);
    expect(pretty.chunks.join('')).toBe(`${bannerLines(simulated).join('\n')}\n`);
  });
});

describe('the banner, after the start-up lines it holds back', () => {
  it('are summed up by the banner: which database', () => {
    expect(bannerLines({ ...simulated, database: 'embedded PGlite in /srv/tribes/data/pglite' })).toContain('  Database             embedded PGlite in /srv/tribes/data/pglite');
  });
});

describe('the address the server is reached at', () => {
  it('is loopback for a wildcard listen address and bracketed for IPv6', () => {
    expect(originOf('0.0.0.0', 3000)).toBe('http://127.0.0.1:3000');
    expect(originOf('::', 3000)).toBe('http://127.0.0.1:3000');
    expect(originOf('::1', 3000)).toBe('http://[::1]:3000');
    expect(originOf('api.internal', 80)).toBe('http://api.internal:80');
  });
});
