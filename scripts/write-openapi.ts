import fs from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/db/client.js';
import { createProcessor, createStripeClient } from '../src/processor/processor.js';

/** Writes the generated OpenAPI document to a file (for linting and for publishing). */
const out = process.argv[2] ?? 'openapi.json';
const database = await openPglite({});
const config = loadConfig({});
// The document is built from route schemas; the processor client is never called here.
const processor = createProcessor(createStripeClient(config.processor));
const app = await buildApp({ config, database, adminToken: 'x'.repeat(32), logger: false, processor, webhookSecrets: [] });
await app.ready();
fs.writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
await database.close();
console.log(`wrote ${out}`);
