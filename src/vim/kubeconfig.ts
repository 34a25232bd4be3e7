/**
 * Reads a Kubernetes VIM out of a kubeconfig the way kubectl would pick it:
 * the current context (or the one asked for), that context's cluster, user
 * and namespace. Only static credentials are accepted, because vnfm stores the
 * credential and uses it later without the operator's shell around it.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { dirname, isAbsolute, resolve } from 'node:path';
import { echo, UsageError, ValidationError } from '../errors.js';
import { FileReadError, isMapping, kindOf, MAX_REFERENCED_BYTES, parseConfigYaml, readBoundedText, readConfigYaml } from '../yaml.js';
import type { VimAuth, VimConfig, VimSecrets, VimSpec } from '../model/vim.js';
import { parsePemCertificates } from './pem.js';

/** Which part of the kubeconfig to read; both mirror kubectl's flags. */
export interface ReadKubeconfigOptions {
  /** Context to use instead of `current-context` (kubectl's `--context`). */
  context?: string;
  /** Namespace to use instead of the context's (kubectl's `--namespace`); it becomes the VIM's `projectName`. */
  namespace?: string;
}

const SERVICE_ACCOUNT_HINT =
  'create a ServiceAccount for vnfm, bind it the roles it needs, issue a token for it ' +
  '(kubectl create token NAME -n NAMESPACE --duration=8760h) and register the VIM from a vim-config with bearer_token';

// kubectl validates namespaces as DNS-1123 labels.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Reads `path` (a kubeconfig) into a VimConfig of type `kubernetes`.
 *
 * Cluster: `server` → `spec.authUrl` (must be https); `certificate-authority-data`
 * or `certificate-authority` (resolved against the kubeconfig's directory, as
 * kubectl does) → `secrets.caCert`; `insecure-skip-tls-verify: true` →
 * `verifyTls: false` and a warning; `tls-server-name` → `spec.extra['tls-server-name']`.
 * User: `token`/`tokenFile` → bearer token, `client-certificate(-data)` +
 * `client-key(-data)` → client certificate, `username`/`password` → basic.
 * Namespace: `opts.namespace`, else the context's, else `default`.
 *
 * Throws ValidationError (field paths like `contexts[name=prod].context.cluster`)
 * for anything malformed, and for exec/auth-provider users.
 */
export function readKubeconfig(path: string, opts: ReadKubeconfigOptions = {}): VimConfig {
  const doc = readConfigYaml(path, 'pass the path of a kubeconfig file (kind: Config)');
  return new KubeconfigReader(path, doc).read(opts);
}

/**
 * Reads a kubeconfig held in memory (one kept in a Secret, say). `origin`
 * names it in errors. References to other files are resolved against the
 * working directory; a kubeconfig from a Secret embeds its data instead.
 */
export function parseKubeconfigText(text: string, origin: string, opts: ReadKubeconfigOptions = {}): VimConfig {
  return new KubeconfigReader(origin, parseConfigYaml(text, origin)).read(opts);
}

class KubeconfigReader {
  private readonly dir: string;
  private readonly warnings: string[] = [];

  constructor(
    private readonly file: string,
    private readonly doc: unknown,
  ) {
    this.dir = dirname(resolve(file));
  }

  read(opts: ReadKubeconfigOptions): VimConfig {
    if (!isMapping(this.doc)) {
      this.fail(
        undefined,
        `is not a kubeconfig: expected a mapping, found ${kindOf(this.doc)}`,
        'a kubeconfig has apiVersion: v1, kind: Config, clusters, users, contexts and current-context',
      );
    }
    const doc = this.doc;
    if (doc.kind !== undefined && doc.kind !== null && doc.kind !== 'Config') {
      this.fail(
        'kind',
        `is ${echo(doc.kind)}, not "Config"`,
        'pass a kubeconfig file; a kubeconfig kept in a Secret must be extracted first, e.g. ' +
          'kubectl get secret NAME -o jsonpath={.data.value} | base64 -d > cluster.kubeconfig',
      );
    }
    const contexts = this.namedList(doc, 'contexts', 'context');
    const clusters = this.namedList(doc, 'clusters', 'cluster');
    const users = this.namedList(doc, 'users', 'user');

    if (contexts.size === 0) {
      this.fail('contexts', 'has no contexts', 'add one: kubectl config set-context NAME --cluster=CLUSTER --user=USER --kubeconfig FILE');
    }
    const contextName = this.pickContext(doc, contexts, opts.context);
    const ctx = contexts.get(contextName)!;
    const ctxField = (key: string) => `contexts[name=${contextName}].context.${key}`;

    const clusterName = this.requiredString(ctx, 'cluster', ctxField('cluster'), 'name the cluster this context uses');
    const cluster = clusters.get(clusterName);
    if (!cluster) {
      this.fail(
        ctxField('cluster'),
        `names cluster ${echo(clusterName)}, which is not defined; clusters: ${listNames(clusters)}`,
        'fix the name, or add the cluster: kubectl config set-cluster NAME --server=https://HOST:6443 --kubeconfig FILE',
      );
    }
    const userName = this.requiredString(ctx, 'user', ctxField('user'), 'name the user (credential) this context uses');
    const user = users.get(userName);
    if (!user) {
      this.fail(
        ctxField('user'),
        `names user ${echo(userName)}, which is not defined; users: ${listNames(users)}`,
        'fix the name, or add the user: kubectl config set-credentials NAME --token=TOKEN --kubeconfig FILE',
      );
    }

    const namespace = this.pickNamespace(ctx, ctxField('namespace'), opts.namespace);
    const { authUrl, verifyTls, caCert, tlsServerName } = this.readCluster(clusterName, cluster);
    const { auth, secrets } = this.readUser(userName, user);

    const spec: VimSpec = { type: 'kubernetes', authUrl, projectName: namespace, auth, verifyTls };
    if (tlsServerName !== undefined) spec.extra = { 'tls-server-name': tlsServerName };
    if (caCert !== undefined) secrets.caCert = caCert;
    return { spec, secrets, warnings: this.warnings };
  }

  private pickContext(doc: Record<string, unknown>, contexts: Map<string, Record<string, unknown>>, wanted: string | undefined): string {
    const names = listNames(contexts);
    if (wanted !== undefined) {
      if (!contexts.has(wanted)) {
        this.fail('contexts', `has no context named ${echo(wanted)}; contexts: ${names}`, `pass --context with one of: ${names}`);
      }
      return wanted;
    }
    const current = doc['current-context'];
    if (current === undefined || current === null || current === '') {
      this.fail(
        'current-context',
        `is not set and no context was given; contexts: ${names}`,
        `pass --context with one of: ${names} (or set one: kubectl config use-context NAME --kubeconfig FILE)`,
      );
    }
    if (typeof current !== 'string') {
      this.fail('current-context', `must be a context name, not ${kindOf(current)}`, `set it to one of: ${names}`);
    }
    if (!contexts.has(current)) {
      this.fail('current-context', `names context ${echo(current)}, which is not defined; contexts: ${names}`, `pass --context with one of: ${names}, or fix current-context`);
    }
    return current;
  }

  private pickNamespace(ctx: Record<string, unknown>, field: string, fromFlag: string | undefined): string {
    if (fromFlag !== undefined) {
      if (!isNamespaceName(fromFlag)) {
        throw new UsageError(`namespace ${echo(fromFlag)} is not a valid Kubernetes namespace name`, {
          hint: 'use lower-case letters, digits and "-", at most 63 characters, starting and ending with a letter or digit',
        });
      }
      return fromFlag;
    }
    const fromContext = this.optionalString(ctx, 'namespace', field);
    if (fromContext === undefined || fromContext === '') return 'default';
    if (!isNamespaceName(fromContext)) {
      this.fail(field, `${echo(fromContext)} is not a valid namespace name (DNS-1123 label)`, 'use lower-case letters, digits and "-", at most 63 characters, or pass --namespace');
    }
    return fromContext;
  }

  private readCluster(name: string, cluster: Record<string, unknown>) {
    const field = (key: string) => `clusters[name=${name}].cluster.${key}`;
    const server = this.requiredString(cluster, 'server', field('server'), 'set the API server URL, e.g. server: https://192.168.0.10:6443');
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'https:' || url.hostname === '') {
      this.fail(
        field('server'),
        `${echo(server)} is not an https:// URL with a host`,
        'write the full URL with its scheme, e.g. server: https://192.168.0.10:6443 (vnfm talks to the API server over TLS only)',
      );
    }
    if (url.username !== '' || url.password !== '') {
      this.fail(field('server'), 'has credentials inside the URL', 'remove user:password@ from the server URL and put the credential under users');
    }

    const insecure = cluster['insecure-skip-tls-verify'];
    if (insecure !== undefined && insecure !== null && typeof insecure !== 'boolean') {
      this.fail(field('insecure-skip-tls-verify'), `must be true or false, not ${kindOf(insecure)}`, 'write insecure-skip-tls-verify: true (unquoted) or remove it');
    }
    const caData = this.optionalString(cluster, 'certificate-authority-data', field('certificate-authority-data'));
    const caFile = this.optionalString(cluster, 'certificate-authority', field('certificate-authority'));
    if (caData && caFile) {
      this.fail(
        field('certificate-authority-data'),
        'and certificate-authority are both set',
        'keep one of them: the embedded certificate-authority-data or the certificate-authority file path',
      );
    }
    if (insecure === true && (caData || caFile)) {
      // kubectl (client-go) refuses this combination too: which one wins would be a guess.
      this.fail(
        field('insecure-skip-tls-verify'),
        'is true while a certificate authority is also set',
        'remove insecure-skip-tls-verify to verify the server with the CA, or remove the CA to skip verification',
      );
    }

    let caCert: string | undefined;
    if (caData) {
      caCert = this.pemFromData(caData, field('certificate-authority-data'), 'CA certificate', 'base64 -w0 ca.crt');
    } else if (caFile) {
      caCert = this.pemFromFile(caFile, field('certificate-authority'), 'embed the CA with certificate-authority-data instead');
    }

    const verifyTls = insecure !== true;
    if (!verifyTls) {
      this.warnings.push(
        `${this.file}: cluster ${echo(name)} has insecure-skip-tls-verify: true; TLS verification is off, ` +
          "so the API server's identity is not checked and its credential could be sent to an impostor",
      );
    }
    const tlsServerName = this.optionalString(cluster, 'tls-server-name', field('tls-server-name')) || undefined;
    if (this.optionalString(cluster, 'proxy-url', field('proxy-url'))) {
      this.warnings.push(`${this.file}: cluster ${echo(name)}: proxy-url is ignored; vnfm connects to the server directly`);
    }
    return { authUrl: server.replace(/\/+$/, ''), verifyTls, caCert, tlsServerName };
  }

  private readUser(name: string, user: Record<string, unknown>): { auth: VimAuth; secrets: VimSecrets } {
    const userField = `users[name=${name}].user`;
    const field = (key: string) => `${userField}.${key}`;
    for (const plugin of ['exec', 'auth-provider'] as const) {
      const value = user[plugin];
      if (value === undefined || value === null) continue;
      const what =
        plugin === 'exec'
          ? `an exec credential plugin${isMapping(value) && typeof value.command === 'string' ? ` (command ${echo(value.command)})` : ''}`
          : `an auth-provider plugin${isMapping(value) && typeof value.name === 'string' ? ` (${echo(value.name)})` : ''}`;
      this.fail(
        field(plugin),
        `uses ${what}; exec and auth-provider plugins are not supported because vnfm stores a static credential and never runs commands from a kubeconfig`,
        SERVICE_ACCOUNT_HINT,
      );
    }

    const token = this.optionalString(user, 'token', field('token'));
    const tokenFile = this.optionalString(user, 'tokenFile', field('tokenFile'));
    const username = this.optionalString(user, 'username', field('username'));
    const password = this.optionalString(user, 'password', field('password'));
    const certData = this.optionalString(user, 'client-certificate-data', field('client-certificate-data'));
    const certFile = this.optionalString(user, 'client-certificate', field('client-certificate'));
    const keyData = this.optionalString(user, 'client-key-data', field('client-key-data'));
    const keyFile = this.optionalString(user, 'client-key', field('client-key'));

    const methods: string[] = [];
    if (token || tokenFile) methods.push('token');
    if (username || password) methods.push('username/password');
    if (certData || certFile || keyData || keyFile) methods.push('client certificate');
    // kubectl lets a token ride along with a client certificate; vnfm keeps a
    // single credential per VIM, so a second one would be silently dropped.
    if (methods.length > 1) {
      this.fail(
        userField,
        `has more than one credential (${methods.join(', ')}); vnfm uses exactly one`,
        'remove all but one of them from this user, or point the context at a user with a single credential',
      );
    }
    if (methods.length === 0) {
      this.fail(userField, 'has no credential: expected token, tokenFile, client-certificate-data with client-key-data, or username with password', SERVICE_ACCOUNT_HINT);
    }

    for (const key of ['as', 'as-uid', 'as-groups', 'as-user-extra']) {
      if (user[key] !== undefined && user[key] !== null) {
        this.warnings.push(`${this.file}: user ${echo(name)}: impersonation (${key}) is ignored; vnfm acts as the user itself`);
      }
    }

    if (methods[0] === 'token') return { auth: { method: 'bearer-token' }, secrets: { bearerToken: this.readToken(token, tokenFile, field) } };

    if (methods[0] === 'username/password') {
      if (!username) this.fail(field('username'), 'is missing while password is set', 'add username, or remove password');
      if (!password) this.fail(field('password'), 'is missing while username is set', 'add password, or remove username');
      this.warnings.push(
        `${this.file}: user ${echo(name)} uses HTTP basic auth, which kube-apiserver removed in v1.19; ` +
          'it works only where a proxy in front of the API server still accepts it',
      );
      return { auth: { method: 'basic', username }, secrets: { password } };
    }

    return { auth: { method: 'client-certificate' }, secrets: this.readClientCertificate({ certData, certFile, keyData, keyFile }, field) };
  }

  private readToken(token: string | undefined, tokenFile: string | undefined, field: (key: string) => string): string {
    let value: string;
    if (token) {
      value = token.trim();
    } else {
      const path = this.resolveRef(tokenFile!);
      value = this.readRef(path, field('tokenFile'), "fix the path (relative paths are resolved against the kubeconfig's directory) or put the token in token").trim();
      this.warnings.push(`${this.file}: the token was copied from ${path}; vnfm keeps this copy and does not re-read the file when the token is rotated`);
    }
    const key = token ? 'token' : 'tokenFile';
    if (value === '') this.fail(field(key), 'is empty', SERVICE_ACCOUNT_HINT);
    if (/\s/.test(value)) this.fail(field(key), 'contains whitespace inside the token', 'a bearer token is a single word; check for a pasted line break');
    return value;
  }

  private readClientCertificate(src: { certData?: string; certFile?: string; keyData?: string; keyFile?: string }, field: (key: string) => string): VimSecrets {
    if (src.certData && src.certFile) {
      this.fail(field('client-certificate-data'), 'and client-certificate are both set', 'keep one of them: the embedded data or the file path');
    }
    if (src.keyData && src.keyFile) {
      this.fail(field('client-key-data'), 'and client-key are both set', 'keep one of them: the embedded data or the file path');
    }
    if (!src.certData && !src.certFile) {
      const keyField = field(src.keyData ? 'client-key-data' : 'client-key');
      this.fail(
        keyField,
        'is set without a client certificate (client-certificate-data or client-certificate)',
        'add the certificate that belongs to this key as client-certificate-data, or remove the key',
      );
    }
    const certField = field(src.certData ? 'client-certificate-data' : 'client-certificate');
    if (!src.keyData && !src.keyFile) {
      this.fail(certField, 'is set without its private key (client-key-data or client-key)', 'add the matching key as client-key-data (base64 -w0 client.key)');
    }
    const keyField = field(src.keyData ? 'client-key-data' : 'client-key');

    const cert = src.certData
      ? this.pemFromData(src.certData, certField, 'client certificate', 'base64 -w0 client.crt')
      : this.pemFromFile(src.certFile!, certField, 'embed the certificate with client-certificate-data instead');

    let keyText: string;
    if (src.keyData) {
      keyText = this.decodeData(src.keyData, keyField, 'base64 -w0 client.key').toString('utf8');
    } else {
      keyText = this.readRef(
        this.resolveRef(src.keyFile!),
        keyField,
        "fix the path (relative paths are resolved against the kubeconfig's directory) or embed the key with client-key-data",
      );
    }
    let key: KeyObject;
    try {
      if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyText)) throw new Error('no -----BEGIN ... PRIVATE KEY----- block');
      key = createPrivateKey({ key: keyText, format: 'pem' });
    } catch (err) {
      this.fail(
        keyField,
        `is not a PEM private key: ${(err as Error).message}`,
        'use the unencrypted PEM key that belongs to the client certificate (encrypted keys are not supported)',
      );
    }
    if (!new X509Certificate(parsePemCertificates(cert)[0]).checkPrivateKey(key)) {
      this.fail(keyField, 'does not belong to the client certificate (the public keys differ)', 'use the private key that was generated together with this certificate');
    }
    return { clientCert: cert, clientKey: keyText.replace(/\r\n?/g, '\n').trim() + '\n' };
  }

  /** Decodes a `*-data` field and checks it holds PEM certificates; returns them normalized. */
  private pemFromData(data: string, field: string, what: string, encodeCommand: string): string {
    const decoded = this.decodeData(data, field, encodeCommand).toString('utf8');
    try {
      return bundle(parsePemCertificates(decoded));
    } catch (err) {
      this.fail(field, `is not a PEM ${what} after base64 decoding: ${(err as Error).message}`, `put the base64 of the PEM file here (${encodeCommand})`);
    }
  }

  private pemFromFile(ref: string, field: string, alternative: string): string {
    const path = this.resolveRef(ref);
    const text = this.readRef(path, field, `fix the path (relative paths are resolved against the kubeconfig's directory), or ${alternative}`);
    try {
      return bundle(parsePemCertificates(text));
    } catch (err) {
      this.fail(field, `points to ${path}, which is not a PEM certificate: ${(err as Error).message}`, `point it at a PEM certificate file, or ${alternative}`);
    }
  }

  private decodeData(data: string, field: string, encodeCommand: string): Buffer {
    const compact = data.replace(/\s+/g, '');
    // Buffer.from(…, 'base64') skips bad characters silently; kubectl's decoder does not.
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact) || compact === '') {
      const looksPem = data.includes('-----BEGIN');
      this.fail(field, looksPem ? 'holds PEM text, but *-data fields hold base64' : 'is not valid base64', `put the base64 of the PEM file here (${encodeCommand})`);
    }
    return Buffer.from(compact, 'base64');
  }

  private resolveRef(ref: string): string {
    return isAbsolute(ref) ? ref : resolve(this.dir, ref);
  }

  private readRef(path: string, field: string, hint: string): string {
    try {
      return readBoundedText(path, MAX_REFERENCED_BYTES);
    } catch (err) {
      if (!(err instanceof FileReadError)) throw err;
      this.fail(field, `points to ${err.path}, which ${err.problem}`, hint);
    }
  }

  private namedList(doc: Record<string, unknown>, list: string, bodyKey: string): Map<string, Record<string, unknown>> {
    const raw = doc[list];
    const out = new Map<string, Record<string, unknown>>();
    if (raw === undefined || raw === null) return out;
    if (!Array.isArray(raw)) {
      this.fail(list, `must be a list, not ${kindOf(raw)}`, `write ${list} as a list of entries "- name: NAME" with a ${bodyKey}: mapping`);
    }
    const firstIndex = new Map<string, number>();
    raw.forEach((item, i) => {
      if (!isMapping(item)) this.fail(`${list}[${i}]`, `must be a mapping with name and ${bodyKey}, not ${kindOf(item)}`, `write "- name: NAME" followed by "${bodyKey}:"`);
      const name = item.name;
      if (typeof name !== 'string' || name === '') this.fail(`${list}[${i}].name`, 'is missing or not a string', `give every entry of ${list} a name`);
      if (firstIndex.has(name)) {
        this.fail(
          `${list}[name=${name}]`,
          `is defined twice (entries ${firstIndex.get(name)! + 1} and ${i + 1})`,
          'remove or rename one of them (kubectl refuses duplicate names as well)',
        );
      }
      firstIndex.set(name, i);
      const body = item[bodyKey];
      if (body !== undefined && body !== null && !isMapping(body)) {
        this.fail(`${list}[name=${name}].${bodyKey}`, `must be a mapping, not ${kindOf(body)}`, `indent the ${bodyKey} settings under "${bodyKey}:"`);
      }
      out.set(name, (body as Record<string, unknown> | null | undefined) ?? {});
    });
    return out;
  }

  private optionalString(obj: Record<string, unknown>, key: string, field: string): string | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') this.fail(field, `must be a string, not ${kindOf(value)}`, `quote the value: ${key}: "..."`);
    return value;
  }

  private requiredString(obj: Record<string, unknown>, key: string, field: string, hint: string): string {
    const value = this.optionalString(obj, key, field);
    if (value === undefined || value === '') this.fail(field, 'is missing', hint);
    return value;
  }

  private fail(field: string | undefined, problem: string, hint: string): never {
    throw new ValidationError(this.file, field, problem, { hint });
  }
}

function listNames(map: Map<string, unknown>): string {
  return map.size === 0 ? '(none)' : [...map.keys()].map((n) => echo(n)).join(', ');
}

function isNamespaceName(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

function bundle(blocks: string[]): string {
  return blocks.join('\n') + '\n';
}
