import type { StepObservation, StepObserver } from '../../shared/graph/step-observer.js';

/** Tells the observers; an observer that throws is ignored. */
export function observeStep(
  observers: readonly StepObserver[] | undefined,
  event: 'onNodeStart' | 'onNodeEnd',
  observation: StepObservation,
): void {
  for (const observer of observers ?? []) {
    try {
      observer[event]?.(observation);
    } catch {
      // An observer must not break a step.
    }
  }
}

/** Whether an observer watches node starts or ends now (an observer may set or drop its hooks as it goes). */
export function watchingNodes(observers: readonly StepObserver[] | undefined): boolean {
  for (const observer of observers ?? []) if (observer.onNodeStart || observer.onNodeEnd) return true;
  return false;
}
