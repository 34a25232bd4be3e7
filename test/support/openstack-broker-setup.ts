// The sandbox tier's one Keystone and Heat, started when a file first asks (test/support/heat.ts, openStackBrokerSetup).
export { openStackBrokerSetup as default } from './heat.js';
