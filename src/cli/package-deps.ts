import type { PackageDeps } from '../csar/index.js';
import type { Context } from './context.js';

export async function packageDeps(ctx: Context): Promise<PackageDeps> {
  const store = await ctx.store();
  return {
    packages: store.packages,
    contents: store.packageContents,
    home: ctx.home,
    now: () => ctx.now(),
    onEvent: (e) => (e.type === 'warning' ? ctx.io.warn(e.message) : ctx.io.info(e.message, 'dim')),
  };
}
