/** Reading the parameters drivers take from an LCM request body. */

export type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The request's `additionalParams`, or an empty object. */
export function additionalParams(request: unknown): Obj {
  const ap = (request as { additionalParams?: unknown } | undefined)?.additionalParams;
  return isObject(ap) ? ap : {};
}
