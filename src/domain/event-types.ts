/** A domain event as a command produces it: readonly plain data. */
export interface Event<Type extends string, Data extends Record<string, unknown>> {
  readonly type: Type;
  readonly data: Readonly<Data>;
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
