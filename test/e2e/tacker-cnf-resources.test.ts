/**
 * The Tacker v2 test_instantiate_cnf_resources shape (tacker-cnf-resources-suite.ts)
 * on the sandbox; test/real/tacker-cnf-resources.test.ts runs it on a real
 * kube-apiserver and kube-controller-manager.
 */
import { describeTackerCnfResources } from './tacker-cnf-resources-suite.js';

describeTackerCnfResources();
