import t from 'tap';
import fc from 'fast-check';
import { canonicalJson } from '../../../src/eventstore/hash.js';

/** The recursive canonicaliser every stored hash was made with, kept here as the oracle. */
function recursiveCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(recursiveCanonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${recursiveCanonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

t.test('the iterative canonical JSON gives the bytes of the recursive one', async (t) => {
  // JSON documents as the log holds them, and the odd values a caller's object may carry.
  const anything = fc.anything({
    maxDepth: 6,
    withNullPrototype: true,
    withSparseArray: true,
    values: [
      fc.string({ unit: 'grapheme-composite' }),
      fc.string({ unit: 'binary' }),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
    ],
  });
  fc.assert(fc.property(fc.oneof(fc.jsonValue({ maxDepth: 8 }), anything), (value) => canonicalJson(value) === recursiveCanonicalJson(value)), {
    numRuns: 20_000,
  });
  t.equal(canonicalJson({ b: [1, undefined, () => 1], a: { d: undefined, c: 'x' } }), '{"a":{"c":"x"},"b":[1,null,null]}');
  t.equal(canonicalJson(JSON.parse(JSON.stringify(new Array(3)))), '[null,null,null]');
});

t.test('any nesting depth is written without exhausting the stack', async (t) => {
  const depth = 200_000;
  const text = `${'[{"k":'.repeat(depth)}1${'}]'.repeat(depth)}`;
  const value = JSON.parse(text) as unknown;
  t.throws(() => recursiveCanonicalJson(value), RangeError, 'the old canonicaliser overflows the stack');
  t.equal(canonicalJson(value), text);
});
