import fs from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { connectPostgres } from '../src/db/client.js';
import { createProcessor, createStripeClient } from '../src/processor/processor.js';

/** Writes the generated OpenAPI document to a file (for linting and for publishing). */
const out = process.argv[2] ?? 'openapi.json';
// The document comes from the route schemas alone and no query runs, so a pool that never
// connects (nothing listens on port 1) stands in for the database: an embedded one cost ~4 s of
// initdb for each of the four writes CI makes (9.5 → 5.6 s each).
const database = connectPostgres({ url: 'postgres://openapi@127.0.0.1:1/none', poolMax: 1, statementTimeoutMs: 1_000 });
const config = loadConfig({});
// The document is built from route schemas; the processor client is never called here.
const processor = createProcessor(createStripeClient(config.processor));
const app = await buildApp({ config, database, adminToken: 'x'.repeat(32), logger: false, processor, webhookSecrets: [] });
await app.ready();
// Written aside and renamed into place: CI's checks run side by side, each writing the same
// document, and none may read a half-written one.
const staging = `${out}.${process.pid}.tmp`;
fs.writeFileSync(staging, `${JSON.stringify(app.swagger(), null, 2)}\n`);
fs.renameSync(staging, out);
await app.close();
await database.close();
console.log(`wrote ${out}`);
