/**
 * The Tacker v2 test_instantiate_cnf_resources shape (test/e2e/tacker-cnf-resources-suite.ts)
 * on the real kube-apiserver of this tier: the claims are bound by the
 * kube-controller-manager's PersistentVolume controller, the HPA versions
 * converted by the API server itself, the reviews answered by its authorizer.
 */
import { inject } from 'vitest';
import '../support/real-apiserver-setup.js';
import { describeTackerCnfResources } from '../e2e/tacker-cnf-resources-suite.js';

if (!inject('realCluster')) throw new Error('test/real runs only in the real-apiserver project, whose global setup starts the control plane');

describeTackerCnfResources();
