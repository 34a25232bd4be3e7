import { defineConfig } from 'vitest/config';

/** The sandbox's own tests (its store, schemas, identity); the conformance suite that holds it to a real kube-apiserver is vnfm's (test/conformance/). */
export default defineConfig({
  test: {
    name: 'kube-sandbox',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
