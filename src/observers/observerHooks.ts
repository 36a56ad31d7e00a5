import { logger } from "../logging/logger.js";
import { safeErrorName } from "../logging/safeErrorCode.js";
import type { RetryObserver } from "./retryEvents.js";

type HookName = keyof RetryObserver;
type HookEvent<K extends HookName> = Parameters<NonNullable<RetryObserver[K]>>[0];
type Listener<K extends HookName> = (event: HookEvent<K>) => void;

/** The observers' hooks, found and bound once when the policy is made. */
export interface ObserverHooks {
  /** Whether any observer listens to `hook`: an event nobody hears is not built. */
  listens(hook: HookName): boolean;
  /** Calls every listener of `hook`; a listener that throws is logged and ignored. */
  notify<K extends HookName>(hook: K, event: HookEvent<K>): void;
}

/** Binds each observer's hooks once: a call is a plain function call, not a lookup by name. */
export function createObserverHooks(observers: readonly RetryObserver[]): ObserverHooks {
  const listeners = <K extends HookName>(hook: K): Listener<K>[] =>
    observers.flatMap((o) => (typeof o[hook] === "function" ? [(o[hook] as Listener<K>).bind(o)] : []));
  const byHook: { [K in HookName]: Listener<K>[] } = {
    onAttempt: listeners("onAttempt"),
    onRetry: listeners("onRetry"),
    onOperationEnd: listeners("onOperationEnd"),
    onAmbiguousWrite: listeners("onAmbiguousWrite"),
    onLocalWait: listeners("onLocalWait"),
  };
  return {
    listens: (hook) => byHook[hook].length > 0,
    notify(hook, event) {
      for (const listener of byHook[hook] as Listener<typeof hook>[]) {
        try {
          listener(event);
        } catch (error) {
          logger.warning(`A retry observer's ${hook} threw and was ignored: ${safeErrorName(error)}`);
        }
      }
    },
  };
}
