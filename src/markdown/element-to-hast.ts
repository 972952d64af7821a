// remark-rehype handler for the zulipElement and zulipContainer nodes of tree.ts: the element their data names,
// as remark-rehype's fallback makes it, without its general-purpose deep copy of the properties (a polyfilled
// structured clone, a few percent of a typical render). Properties here are strings, numbers, booleans and
// lists of them; lists are copied so that the output never shares one with the mdast node.
import type { Element, Properties } from 'hast';
import type { State } from 'mdast-util-to-hast';
import type { MdNode } from './tree.js';

function copyProperties(properties: Properties): Properties {
  const copy: Properties = {};
  for (const [name, value] of Object.entries(properties)) {
    if (Array.isArray(value)) copy[name] = [...value];
    else if (value !== null && typeof value === 'object') copy[name] = structuredClone(value);
    else copy[name] = value;
  }
  return copy;
}

export function zulipElementToHast(state: State, node: MdNode): Element {
  const data = node.data ?? {};
  const result: Element = { type: 'element', tagName: 'div', properties: {}, children: state.all(node as never) };
  state.patch(node as never, result);
  if (typeof data.hName === 'string') result.tagName = data.hName;
  if (data.hProperties) Object.assign(result.properties, copyProperties(data.hProperties));
  if (data.hChildren !== null && data.hChildren !== undefined) result.children = data.hChildren;
  return result;
}
