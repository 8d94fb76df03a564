/**
 * `npm run docs:config`: writes docs/reference/configuration.md from the setting declarations
 * (shared/config/settings/). test/unit/configuration-reference.test.ts fails while the committed page
 * differs from what this writes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIGURATION_REFERENCE_PATH, renderConfigurationReference } from './render-configuration-reference.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const path = join(root, CONFIGURATION_REFERENCE_PATH);
mkdirSync(dirname(path), { recursive: true });
writeFileSync(path, renderConfigurationReference());
process.stderr.write(`wrote ${CONFIGURATION_REFERENCE_PATH}\n`);
