import http from 'node:http';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { trackInFlight } from './in-flight.js';

it('counts the requests being served, and forgets one whose client went away', async () => {
  const app = Fastify();
  const inFlight = trackInFlight(app);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  app.get('/slow', async () => {
    await held;
    return { ok: true };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const answered = [fetch(`http://127.0.0.1:${port}/slow`), fetch(`http://127.0.0.1:${port}/slow`)];
  const aborted = http.get({ host: '127.0.0.1', port, path: '/slow' }).on('error', () => {});
  await expect.poll(inFlight).toBe(3);
  aborted.destroy();
  await expect.poll(inFlight).toBe(2);
  release();
  await Promise.all(answered);
  await expect.poll(inFlight).toBe(0);
  await app.close();
});
