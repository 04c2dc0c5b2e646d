import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { GENERATED_FILES, GENERATED_SECTIONS, regenerate } from './readme/tables.js';

/**
 * `npm run readme:tables`: rewrites the documentation's generated sections from the code (the
 * configuration, error and benchmark tables, the webhook event types), in whichever page each
 * lives (GENERATED_SECTIONS).
 */
for (const page of GENERATED_FILES) {
  const file = path.join(PROJECT_ROOT, page);
  const before = fs.readFileSync(file, 'utf8');
  const after = regenerate(page, before);
  if (after !== before) fs.writeFileSync(file, after);
  const names = Object.entries(GENERATED_SECTIONS).filter(([, s]) => s.file === page).map(([name]) => name);
  console.log(`${page}: ${names.join(', ')} ${after === before ? 'already current' : 'rewritten'}`);
}
