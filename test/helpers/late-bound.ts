/**
 * A stand-in for an object a `beforeAll` hook starts: it can be named in a describe body (and passed
 * around) before the hook has run, and forwards every use to the started object. Used before then, it
 * throws naming `what`.
 */
export function lateBound<T extends object>(what: string, current: () => T | undefined): T {
  const started = (): T => {
    const value = current();
    if (value === undefined) throw new Error(`${what} is not started yet: use it inside a hook or a test`);
    return value;
  };
  return new Proxy({} as T, {
    get(_target, property) {
      const value = started();
      const member: unknown = Reflect.get(value, property, value);
      // Methods run on the started object, whose closures and private state they need.
      return typeof member === 'function' ? (member as (...args: unknown[]) => unknown).bind(value) : member;
    },
    set: (_target, property, value) => Reflect.set(started(), property, value),
    has: (_target, property) => Reflect.has(started(), property),
    ownKeys: () => Reflect.ownKeys(started()),
    getOwnPropertyDescriptor(_target, property) {
      const descriptor = Reflect.getOwnPropertyDescriptor(started(), property);
      // The stand-in has no own properties: a proxy may only report configurable ones for it.
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
