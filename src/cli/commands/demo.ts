/**
 * `vnfm demo`: the main job end to end — the basic CNF sample through its
 * whole life (onboard, create, instantiate, scale out, heal, scale in,
 * change package, terminate, delete) — against an in-process sandbox in a
 * temporary VNFM_HOME, or against a registered VIM with --vim.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { InterruptedError, TerminatedError, TimeoutError, UsageError } from '../../errors.js';
import type { LcmDeps, LcmEvent, OperationResult } from '../../lcm/index.js';
import type { VnfPackage } from '../../csar/index.js';
import { createContext, type Context } from '../context.js';
import { withExamples } from '../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../output/printer.js';
import { lcmDeps } from '../lcm/deps.js';
import { createProgress } from '../lcm/progress.js';
import { parseDuration } from '../lcm/run.js';
import { packageDeps } from '../package-deps.js';
import { loadSandbox } from '../sandbox-server.js';
import { vimDeps } from '../vim-deps.js';
import { setMaxListeners } from 'node:events';

interface Flags extends OutputOptions {
  vim?: string;
  keep?: boolean;
  helm?: boolean;
  timeout: string;
}

interface StepResult {
  step: string;
  result: string;
  seconds: number;
}

/** The manifest CNF, or with --helm the Helm chart CNF: both samples have the same request files. */
const SAMPLE = 'basic-cnf';
const HELM_SAMPLE = 'helm-cnf';

export function demoCommand(ctx: Context): Command {
  const cmd = new Command('demo')
    .description(
      'Run the basic CNF sample (with --helm, the Helm chart sample) through its whole life: onboard, create, instantiate, scale out, heal, scale in, change package, terminate, delete',
    )
    .option('--vim <vim>', 'run against this registered Kubernetes VIM, in the current VNFM_HOME (default: an in-process sandbox in a temporary VNFM_HOME)')
    .option('--keep', 'stop after the scale-out and leave the instance INSTANTIATED for inspection')
    .option('--helm', 'run the Helm chart sample (csar-samples/helm-cnf) instead, through helm (VNFM_HELM, else PATH)')
    .option('--timeout <duration>', 'limit for each operation', '5m');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['see the whole lifecycle on a local sandbox (no cluster needed)', 'vnfm demo'],
    ['run it on a real cluster registered as a VIM', 'vnfm demo --vim vim-k8s'],
    ['leave the scaled-out CNF running to look at it with kubectl', 'vnfm demo --keep'],
    ['the same life for a CNF packaged as a Helm chart', 'vnfm demo --helm'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const seconds = parseDuration(flags.timeout);
    if (flags.helm) {
      // No helm is a usage error (exit 2) naming VNFM_HELM and PATH, before anything starts.
      const { findHelm } = await import('../../infra/helm/index.js');
      findHelm(ctx.env);
    }
    const work = mkdtempSync(join(tmpdir(), 'vnfm-demo-'));
    let closeSandbox: (() => Promise<void>) | undefined;
    let demoCtx = ctx;
    let keepWork = false;
    try {
      let vimRef = flags.vim;
      if (!vimRef) {
        demoCtx = createContext(ctx.io, { ...ctx.env, VNFM_HOME: join(work, 'home'), VNFM_MASTER_KEY: undefined, VNFM_MASTER_KEY_COMMAND: undefined }, ctx.cwd);
        const { startSandbox, writeSandboxConfigs } = await loadSandbox();
        const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
        closeSandbox = () => sandbox.close();
        const vimConfig = join(work, 'vim-config.yaml');
        writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(work, 'kubeconfig') });
        ctx.io.info(`sandbox: ${sandbox.url} (kubeconfig ${join(work, 'kubeconfig')}); VNFM_HOME ${join(work, 'home')}`, 'bold');
        const { registerVim } = await import('../../vim/register.js');
        const vim = await registerVim(await vimDeps(demoCtx, { writesSecrets: true }), {
          name: 'demo-sandbox',
          isDefault: true,
          source: { kind: 'vim-config', path: vimConfig },
        });
        vimRef = vim.id;
      }
      // In the user's own VNFM_HOME (--vim) the packages it onboarded are deleted at the end; a temporary one goes whole.
      const results = await runDemo(demoCtx, { vimRef, keep: Boolean(flags.keep), seconds, work, removePackages: Boolean(flags.vim), sample: flags.helm ? HELM_SAMPLE : SAMPLE });
      const room = tableRoom(ctx, results);
      await printList(
        ctx.io,
        flags,
        {
          empty: '',
          columns: [
            { header: 'STEP', key: 'step', cell: (r: StepResult) => cut(r.step, room.step) },
            { header: 'RESULT', key: 'result', cell: (r: StepResult) => cut(shortIds(r.result), room.result) },
            { header: 'SECONDS', key: 'seconds', cell: (r: StepResult) => r.seconds.toFixed(1) },
          ],
          toData: (r: StepResult) => ({ ...r }),
        },
        results,
      );
      if (flags.keep) {
        keepWork = true;
        if (closeSandbox) {
          ctx.io.info(`the instance stays INSTANTIATED; inspect it with: KUBECONFIG=${join(work, 'kubeconfig')} kubectl get all`);
          ctx.io.info('press Ctrl-C to stop the sandbox and remove everything');
          await new Promise<void>((resolve) => {
            process.once('SIGINT', resolve);
            process.once('SIGTERM', resolve);
          });
          keepWork = false;
        } else {
          ctx.io.info(`the instance stays INSTANTIATED on vim ${flags.vim}, and the packages stay onboarded: vnfm vnf-list, vnfm vnfpkg-list`);
        }
      }
    } finally {
      if (demoCtx !== ctx) await demoCtx.close();
      await closeSandbox?.();
      if (!keepWork || closeSandbox) rmSync(work, { recursive: true, force: true });
    }
  });
}

const UUID = /\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

/**
 * The columns the summary table's STEP and RESULT may take on a terminal
 * (SECONDS and the gaps between columns left out): the result whole where
 * it fits beside the longest step, else each cut to share the width;
 * unbounded in a pipe or a file.
 */
function tableRoom(ctx: Context, results: readonly StepResult[]): { step: number; result: number } {
  const stdout = ctx.io.streams.stdout as NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  if (!stdout.isTTY || !stdout.columns) return { step: Infinity, result: Infinity };
  const available = Math.max(40, stdout.columns - 'SECONDS'.length - 2 * 3);
  const stepMax = Math.max('STEP'.length, ...results.map((r) => r.step.length));
  const resultMax = Math.max('RESULT'.length, ...results.map((r) => shortIds(r.result).length));
  const result = Math.min(resultMax, Math.max(available - stepMax, Math.floor(available / 2)));
  return { step: available - result, result };
}

/** Ids as their first 8 characters, as the list tables show them (-o json keeps them whole). */
function shortIds(text: string): string {
  return text.replace(UUID, '$1');
}

/** `text` cut to `room` columns. */
function cut(text: string, room: number): string {
  return text.length > room ? `${text.slice(0, room - 1)}…` : text;
}

async function runDemo(ctx: Context, opts: { vimRef: string; keep: boolean; seconds: number; work: string; removePackages: boolean; sample: string }): Promise<StepResult[]> {
  const { io } = ctx;
  const results: StepResult[] = [];
  // Packages the demo onboarded itself (not ones the VNFM_HOME already had) are deleted at the end.
  const onboarded: VnfPackage[] = [];
  let total = opts.keep ? 4 : 9;
  const step = async <T>(name: string, fn: () => Promise<T>, describe: (t: T) => string): Promise<T> => {
    io.info(`[${results.length + 1}/${total}] ${name}`, 'bold');
    const started = Date.now();
    const value = await fn();
    const result = describe(value);
    results.push({ step: name, result, seconds: (Date.now() - started) / 1000 });
    io.success(`  ${result}`);
    return value;
  };

  const { copyShippedTree } = await import('../../assets/index.js');
  const sampleDir = join(opts.work, opts.sample);
  copyShippedTree(`csar-samples/${opts.sample}`, sampleDir);
  const request = (name: string) => JSON.parse(readFileSync(join(sampleDir, 'requests', `${name}.json`), 'utf8')) as Record<string, unknown>;

  const store = await ctx.store();
  const vim = await store.vims.get(opts.vimRef);
  if (vim.spec.type !== 'kubernetes') {
    throw new UsageError(`vim "${vim.name}" is an OpenStack VIM; the demo runs a CNF`, { hint: 'give a Kubernetes VIM to --vim' });
  }
  const { onboardPackage } = await import('../../csar/index.js');
  const pkgDeps = await packageDeps(ctx);
  const onboard = async (tree: string) => {
    const { validatePackage } = await import('../../csar/index.js');
    const vnfdId = (await validatePackage(join(sampleDir, tree))).vnfd?.id;
    const existing = vnfdId ? await store.packages.find(vnfdId) : undefined;
    if (existing) return existing;
    const made = (await onboardPackage(pkgDeps, { path: join(sampleDir, tree) })).pkg;
    onboarded.push(made);
    return made;
  };
  const v1 = await step(
    'onboard the packages',
    async () => [await onboard('package'), await onboard('package-v2')],
    ([a, b]) => `vnfdIds ${a!.vnfdId} (v1), ${b!.vnfdId} (v2)`,
  );
  if (!opts.keep && opts.removePackages && onboarded.length > 0) total += 1;

  const { deps, close } = await lcmDeps(ctx);
  try {
    const lcm = await import('../../lcm/index.js');
    const instance = await step(
      'create the VNF instance',
      async () => lcm.createVnf(deps, { vnfdId: v1[0]!.vnfdId, name: `demo-${Date.now().toString(36)}`, description: 'vnfm demo' }),
      (i) => `instance ${i.id} (${i.instantiationState})`,
    );
    const run = (name: string, action: (d: LcmDeps, signal: AbortSignal, onEvent: (e: LcmEvent) => void) => Promise<OperationResult>) =>
      step(
        name,
        async () => {
          const progress = createProgress(io, () => ctx.now());
          const controller = new AbortController();
          setMaxListeners(0, controller.signal);
          const timer = setTimeout(() => controller.abort(new TimeoutError(`${name} timed out after ${opts.seconds}s`)), opts.seconds * 1000);
          const onSigint = () => controller.abort(new InterruptedError('interrupted'));
          const onSigterm = () => controller.abort(new TerminatedError('terminated (SIGTERM)'));
          process.once('SIGINT', onSigint);
          process.once('SIGTERM', onSigterm);
          try {
            return await action(deps, controller.signal, (e) => progress.onEvent(e));
          } finally {
            progress.stop();
            clearTimeout(timer);
            process.removeListener('SIGINT', onSigint);
            process.removeListener('SIGTERM', onSigterm);
          }
        },
        (r) => {
          const vnfcs = r.vnfInstance.instantiatedVnfInfo?.vnfcInfo?.length;
          return `${r.opOcc.operation} ${r.opOcc.operationState}${vnfcs !== undefined ? `, ${vnfcs} VNFCs` : ''}`;
        },
      );
    const vimInfo = { vimConnectionInfo: { vim1: { vimId: opts.vimRef, vimType: 'kubernetes' } } };
    await run('instantiate', (d, signal, onEvent) => lcm.instantiateVnf(d, instance.id, { ...request('instantiate'), ...vimInfo }, { signal, onEvent }));
    const scaled = await run('scale out vdu1_aspect', (d, signal, onEvent) => lcm.scaleVnf(d, instance.id, request('scale-out'), { signal, onEvent }));
    if (opts.keep) return results;
    const victim = scaled.vnfInstance.instantiatedVnfInfo?.vnfcInfo?.find((v) => v.vduId === 'VDU1');
    await run(`heal one VNFC${victim ? ` (${victim.id})` : ''}`, (d, signal, onEvent) =>
      lcm.healVnf(d, instance.id, { cause: 'demo: replace one pod', ...(victim ? { vnfcInstanceId: [victim.id] } : {}) }, { signal, onEvent }),
    );
    await run('scale in vdu1_aspect', (d, signal, onEvent) => lcm.scaleVnf(d, instance.id, request('scale-in'), { signal, onEvent }));
    await run('change to package v2', (d, signal, onEvent) => lcm.changeVnfPackage(d, instance.id, request('change-package'), { signal, onEvent }));
    await run('terminate', (d, signal, onEvent) => lcm.terminateVnf(d, instance.id, request('terminate'), { signal, onEvent }));
    await step(
      'delete the VNF instance',
      async () => lcm.deleteVnf(deps, instance.id),
      (i) => `instance ${i.id} deleted`,
    );
    if (opts.removePackages && onboarded.length > 0) {
      const { deletePackage } = await import('../../csar/index.js');
      await step(
        'delete the packages it onboarded',
        async () => {
          for (const p of onboarded) await deletePackage(pkgDeps, p.id);
          return onboarded;
        },
        (list) => `packages ${list.map((p) => p.id).join(', ')} deleted`,
      );
    }
    return results;
  } finally {
    close();
  }
}
