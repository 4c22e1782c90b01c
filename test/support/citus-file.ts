import { afterAll, inject } from 'vitest';
import { dropCopies } from './citus.ts';

/** Under `npm run test:citus`, each test file's databases go once it is done (see citus.ts). */
afterAll(async () => {
  const cluster = inject('citus');
  if (cluster) await dropCopies(cluster);
});
