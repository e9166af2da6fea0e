// npm run openapi: writes docs/api/openapi.json from the API contract (api/routes.ts).
// api/openapi.test.ts fails when the checked-in file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { openApiText } from '../api/openapi.ts';

const file = new URL('../docs/api/openapi.json', import.meta.url);
writeFileSync(file, openApiText());
console.log('wrote docs/api/openapi.json');
