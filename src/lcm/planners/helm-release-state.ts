/**
 * A release's state as an operation finds it before changing it, and its
 * end: a release of the name that is someone else's (assertReleaseFree), the
 * releases an occurrence's journal shows it installed (journaledReleases), a
 * release an earlier helm run left pending (recoverPending), the release's
 * namespace (checkNamespace, prepareNamespace), and the uninstall of one
 * release or of all an instance has (uninstall, uninstallAll).
 */
import { ConflictError, VimCheckError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { JournalStep } from '../../model/resources.js';
import type { VimConnection } from '../../model/lcm.js';
import type { HelmDrivers } from './helm.js';
import { manifestObjects, refOf, releaseRef, report } from './helm-release.js';

/** Uninstalls the release and waits until every object it had (and `also`) is gone; a release already gone is fine. */
export async function uninstall(d: HelmDrivers, ctx: DriverContext, release: string, namespace: string, also: ResourceRef[]): Promise<void> {
  const ref = releaseRef(release, namespace);
  const present = await d.helm.status({ release, namespace, signal: ctx.signal });
  let objects: ResourceRef[] = [];
  if (present) {
    objects = manifestObjects(await d.helm.getManifest({ release, namespace, signal: ctx.signal }), `the manifest of release ${release}`).map(refOf);
    ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
    await d.helm.uninstall({ release, namespace, signal: ctx.signal });
    ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
    report(ctx, ref, 'uninstalled');
  }
  const seen = new Set<string>();
  const all = [...objects.map((o) => ({ ...o, namespace: o.namespace ?? namespace })), ...also].filter((r) => {
    const key = `${r.apiVersion}|${r.kind}|${r.namespace ?? ''}|${r.name}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  await d.kube.awaitGone(ctx, { resources: all });
}

/** A release of this name in the namespace that the instance does not own: refused before anything changes. */
export async function assertReleaseFree(d: HelmDrivers, release: string, namespace: string, signal: AbortSignal): Promise<void> {
  const found = await d.helm.status({ release, namespace, signal });
  if (found) {
    throw new ConflictError(
      `a Helm release ${release} already exists in namespace ${namespace} (chart ${found.chart}, revision ${found.revision}, ${found.status}); vnfm does not take over a release it did not install`,
      {
        hint: 'choose another release name (v1: helmreleasename) or namespace, or uninstall that release first (helm uninstall -n NAMESPACE RELEASE)',
      },
    );
  }
}

/**
 * Uninstalls releases given in install order, in reverse (as what a later
 * chart brings may lean on an earlier one), each waited for until its
 * objects are gone; `also` is waited for once the last is uninstalled.
 */
export async function uninstallAll(d: HelmDrivers, ctx: DriverContext, releases: string[], namespace: string, also: ResourceRef[]): Promise<void> {
  const reversed = [...releases].reverse();
  for (const [i, release] of reversed.entries()) await uninstall(d, ctx, release, namespace, i === reversed.length - 1 ? also : []);
  if (reversed.length === 0 && also.length > 0) await d.kube.awaitGone(ctx, { resources: also });
}

/** The releases an occurrence's journal shows it installed or upgraded (its own, whatever state a failure left them in). */
export function journaledReleases(steps: readonly JournalStep[]): Set<string> {
  return new Set(
    steps.filter((s) => s.resource.kind === 'Release' && s.resource.apiVersion === 'helm.sh/v3' && (s.action === 'create' || s.action === 'update')).map((s) => s.resource.name),
  );
}

/**
 * Brings back a release an earlier helm run left pending-install,
 * pending-upgrade or pending-rollback (helm, or vnfm with it, was killed
 * mid-way), as an operator would before trying again: `helm rollback` to its
 * last deployed revision (Helm allows a rollback of a pending release; it
 * refuses any other upgrade), or `helm uninstall` when it never had one.
 * Only for an occurrence no vnfm runs any more (the engine retries only
 * FAILED_TEMP ones), so the pending run is known to be dead.
 */
export async function recoverPending(d: HelmDrivers, ctx: DriverContext, release: string, namespace: string): Promise<void> {
  const history = await d.helm.history({ release, namespace, signal: ctx.signal });
  const last = history.at(-1);
  if (!last?.status.startsWith('pending-')) return;
  const ref = releaseRef(release, namespace);
  const settled = history.filter((r) => !r.status.startsWith('pending-'));
  const back = settled.filter((r) => r.status === 'deployed').at(-1) ?? settled.at(-1);
  const left = `left ${last.status} at revision ${last.revision} by a helm run that did not finish`;
  if (!back) {
    report(ctx, ref, `${left}: uninstalling it`);
    await uninstall(d, ctx, release, namespace, []);
    return;
  }
  ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: `rollback of ${last.status} revision ${last.revision} to revision ${back.revision}` });
  await d.helm.rollback({ release, namespace, revision: back.revision, signal: ctx.signal });
  ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `rolled back to revision ${back.revision}` });
  report(ctx, ref, `${left}: rolled back to revision ${back.revision}`);
}

/**
 * Refuses a namespace the cluster is deleting, or lacks when the request did
 * not ask vnfm to create it (additionalParams.vnfm_create_namespace,
 * vnf-instantiate --create-namespace): exit 6, as for a manifest CNF.
 */
export async function checkNamespace(
  d: HelmDrivers,
  vim: Pick<VimConnection, 'name'>,
  namespace: string,
  create: boolean,
  signal: AbortSignal,
): Promise<'active' | 'missing' | 'unknown'> {
  const state = await d.helm.namespaceState({ namespace, signal });
  if (state === 'terminating') {
    throw new VimCheckError(`namespace "${namespace}" on the cluster of VIM ${vim.name} is being deleted: nothing can be created in it`, {
      hint: 'wait until it is gone (kubectl get namespace), or instantiate into another one (additionalParams.namespace)',
    });
  }
  if (state === 'missing' && !create) {
    throw new VimCheckError(`namespace "${namespace}" does not exist on the cluster of VIM ${vim.name}`, {
      hint: `create it first (kubectl create namespace ${namespace}), give another one in additionalParams.namespace, or let vnfm create it: "vnfm_create_namespace": true in additionalParams (vnf-instantiate --create-namespace)`,
    });
  }
  return state;
}

/** Checks the namespace again as the operation runs, and creates it (labelled managed-by vnfm) when it is missing and the request asked for that. */
export async function prepareNamespace(d: HelmDrivers, ctx: DriverContext, vim: Pick<VimConnection, 'name'>, namespace: string, create: boolean): Promise<void> {
  if ((await checkNamespace(d, vim, namespace, create, ctx.signal)) !== 'missing') return;
  if (await d.helm.createNamespace({ namespace, signal: ctx.signal })) report(ctx, { apiVersion: 'v1', kind: 'Namespace', name: namespace }, 'created (vnfm_create_namespace)');
}
