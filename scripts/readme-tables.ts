import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { GENERATED_SECTIONS, regenerate } from './readme/tables.js';

/** `npm run readme:tables`: rewrites the README's generated tables (configuration, errors, webhook events) from the code. */
const file = path.join(PROJECT_ROOT, 'README.md');
const before = fs.readFileSync(file, 'utf8');
const after = regenerate(before);
if (after !== before) fs.writeFileSync(file, after);
console.log(`README.md: ${Object.keys(GENERATED_SECTIONS).join(', ')} ${after === before ? 'already current' : 'rewritten'}`);
