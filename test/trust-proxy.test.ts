import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { buildTestApp, type TestApp } from './helpers.js';

describe('TRUST_PROXY', () => {
  it('is off unless set, and takes true, false or a comma-separated list of proxy addresses and CIDR ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7 ,fd00::/8,loopback' }).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', 'loopback']);
  });

  it('refuses a hop count, which Fastify ignores, and anything but addresses and ranges, saying what to set instead', () => {
    const error = (value: string) => {
      try {
        loadConfig({ TRUST_PROXY: value });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`TRUST_PROXY=${value} was accepted`);
    };
    expect(error('2')).toMatch(/does not take a number of hops.*List the load balancer addresses or CIDR ranges/);
    for (const wrong of ['10.0.0.0/33', 'lb.internal', '10.0.0.1,', '300.1.1.1', 'fd00::/129', '10.0.0.0/8/1']) {
      expect(error(wrong)).toContain(`TRUST_PROXY must be true, false, or a comma-separated list`);
    }
    expect(error('10.0.0.1,lb.internal')).toContain('"lb.internal" in "10.0.0.1,lb.internal" is none of these');
  });
});

describe('per-address budgets behind a load balancer', () => {
  const LOAD_BALANCER = '10.0.3.4';
  const behindProxy = (trustProxy: boolean | string[]) =>
    buildTestApp({ config: { trustProxy, rateLimit: { max: 3, windowMs: 60_000, redisUrl: undefined, signupsPerHour: 1000 } } });
  /** Four anonymous requests from `client` as the load balancer forwards them, then one from `other`. */
  async function budgets(t: TestApp, client: string, other: string, remoteAddress = LOAD_BALANCER) {
    const discover = (forwardedFor: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/discover/communities', headers: { 'x-forwarded-for': forwardedFor }, remoteAddress });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await discover(client)).statusCode);
    codes.push((await discover(other)).statusCode);
    return codes;
  }

  it('gives two clients with different X-Forwarded-For separate budgets when TRUST_PROXY names the load balancer', async () => {
    const t = await behindProxy(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy);
    try {
      expect(await budgets(t, '203.0.113.1', '203.0.113.2')).toEqual([200, 200, 200, 429, 200]);
      // A chain of proxies: the client is the last address before the trusted ones.
      expect(await budgets(t, '198.51.100.9, 203.0.113.3, 10.0.9.9', '198.51.100.9, 203.0.113.4')).toEqual([200, 200, 200, 429, 200]);
    } finally {
      await t.close();
    }
  });

  it('makes every client behind a load balancer share its address without TRUST_PROXY, X-Forwarded-For ignored', async () => {
    const t = await behindProxy(loadConfig({}).trustProxy);
    try {
      expect(await budgets(t, '203.0.113.1', '203.0.113.2')).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await t.close();
    }
  });

  it('never lets a client that connects directly pose as others through X-Forwarded-For', async () => {
    const t = await behindProxy(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy);
    try {
      expect(await budgets(t, '203.0.113.1', '203.0.113.2', '198.51.100.77')).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await t.close();
    }
  });
});
