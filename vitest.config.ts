import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Three tiers. `sandbox`: every test, against the in-process Kubernetes API
 * sandbox and the other servers the tests start. `real-apiserver`: only when
 * VNFM_KUBE_APISERVER_DIR names the directory of the real kube-apiserver and
 * kube-controller-manager (test/support/real-apiserver.ts): the conformance
 * suite and the end-to-end tests that matter for a real cluster, once more,
 * against one real control plane started for the whole run.
 * `real-openstack`: only when VNFM_REAL_OPENSTACK=1, the tests of
 * test/real-openstack/ against one real OpenStack (Keystone, Heat, Nova,
 * Neutron, Glance, Placement: test/support/real-openstack.ts) whose cold
 * start runs alongside the other tiers' tests.
 */
const realTier: TestProjectInlineConfiguration[] = process.env['VNFM_KUBE_APISERVER_DIR']
  ? [
      {
        extends: true,
        test: {
          name: 'real-apiserver',
          include: [
            'test/conformance/**/*.test.ts',
            'test/real/**/*.test.ts',
            'test/e2e/vnf-lifecycle.test.ts',
            'test/e2e/kubernetes-driver.test.ts',
            'test/e2e/kuryr-cnf.test.ts',
            'test/e2e/tacker-change-package.test.ts',
            'test/e2e/tacker-container-update.test.ts',
            'test/e2e/vnf-describe.test.ts',
            'test/e2e/vnf-adopt.test.ts',
            'test/e2e/vnf-logs.test.ts',
            'test/e2e/vnf-why-failed.test.ts',
          ],
          globalSetup: ['test/support/real-apiserver-setup.ts'],
        },
      },
    ]
  : [];

const realOpenStackTier: TestProjectInlineConfiguration[] =
  process.env['VNFM_REAL_OPENSTACK'] === '1'
    ? [
        {
          extends: true,
          test: {
            name: 'real-openstack',
            include: ['test/real-openstack/**/*.test.ts'],
            globalSetup: ['test/support/real-openstack-setup.ts'],
          },
        },
      ]
    : [];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on servers they start (Keystone, Heat, sshd, a
    // registry, API servers), not on the CPU: three files at a time keep two
    // cores busy. VNFM_TEST_WORKERS overrides.
    maxWorkers: Number(process.env['VNFM_TEST_WORKERS'] ?? 3),
    projects: [
      {
        extends: true,
        test: {
          name: 'sandbox',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/real/**', 'test/real-openstack/**'],
          // One Keystone and Heat for the files that use them (useOpenStack), started when the first one asks.
          globalSetup: ['test/support/openstack-broker-setup.ts'],
        },
      },
      ...realTier,
      ...realOpenStackTier,
    ],
  },
});
