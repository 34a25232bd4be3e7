/** Redaction of what vnfm writes about a node: secrets become `***`. */
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/mgmt/ssh/index.js';
import { createSessionRedactor, envSecrets, sessionSecrets } from '../../src/mgmt/ssh/redact.js';

describe('createRedactor', () => {
  it('replaces every occurrence of each secret with ***', () => {
    const r = createRedactor(['s3cret', 'tok']);
    expect(r('login s3cret then s3cret; tok=tok')).toBe('login *** then ***; ***=***');
  });

  it('hides a secret that contains another one whole (longest first)', () => {
    const r = createRedactor(['pass', 'password123']);
    expect(r('echo password123 | sudo -S')).toBe('echo *** | sudo -S');
    expect(r('pass')).toBe('***');
  });

  it('ignores empty secrets and takes regular-expression characters literally', () => {
    const r = createRedactor(['', 'a.b*c(d)$', '']);
    expect(r('x a.b*c(d)$ y axbbbc(d)$')).toBe('x *** y axbbbc(d)$');
    expect(createRedactor(['', ''])('nothing to hide')).toBe('nothing to hide');
  });
});

describe('session secrets', () => {
  const key = ['-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmU', 'AAAAC3NzaC1lZDI1NTE5AAAAIJm', '-----END OPENSSH PRIVATE KEY-----'].join('\n');
  const target = { host: '10.0.0.5', username: 'ubuntu', password: 'pw-1', passphrase: 'phrase-2', privateKey: key, serverId: 's1', label: 'VDU1 (10.0.0.5)' };

  it("are the password, the passphrase, every line of the key and the caller's list", () => {
    const r = createSessionRedactor(sessionSecrets(target, ['registry-token']));
    expect(r(`pw-1 phrase-2 ${key} registry-token`)).toBe('*** *** -----BEGIN OPENSSH PRIVATE KEY-----\n***\n***\n-----END OPENSSH PRIVATE KEY----- ***');
  });

  it('hide the password inside a URL and the values of environment variables named like secrets', () => {
    const env = { http_proxy: 'http://alice:wonder@proxy:3128', REGISTRY_PASSWORD: 'hunter2', API_TOKEN: 'abc123', LANG: 'C' };
    expect(envSecrets(env)).toEqual(['hunter2', 'abc123']);
    const r = createSessionRedactor([...sessionSecrets(target), ...envSecrets(env)]);
    expect(r('proxy http://alice:wonder@proxy:3128 pw hunter2 tok abc123 lang C')).toBe('proxy http://alice:***@proxy:3128 pw *** tok *** lang C');
  });
});
