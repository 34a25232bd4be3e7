/**
 * Several nodes at once: a driver configures every node of a step in
 * parallel, a limited number at a time, and lets each one finish even when
 * others fail, so one bad node does not leave the rest half-configured.
 */
import { NodesFailedError, type NodeFailure } from './errors.js';

/**
 * Runs `fn` for every item, at most `limit` at once. Every item runs to its
 * end; then, if any failed, throws NodesFailedError naming each failed node
 * (by `label`) with its error, in input order. Otherwise returns the results
 * in input order.
 */
export async function forEachNode<T, R>(items: readonly T[], limit: number, label: (item: T) => string, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  const failed: (NodeFailure & { index: number })[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index] as T;
      try {
        results[index] = await fn(item);
      } catch (error) {
        failed.push({ index, node: label(item), error });
      }
    }
  };
  const workers = Math.min(Math.max(1, Math.floor(limit) || 1), items.length);
  await Promise.all(Array.from({ length: workers }, worker));
  if (failed.length > 0) {
    failed.sort((a, b) => a.index - b.index);
    throw new NodesFailedError(
      failed.map(({ node, error }) => ({ node, error })),
      items.length,
    );
  }
  return results;
}
