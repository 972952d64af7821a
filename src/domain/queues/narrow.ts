import { ApiError, errors } from '../errors.js';

/**
 * Bounds on a queue's narrow, which is stored in the log with the queue (docs/DECISIONS.md, "Limits").
 * Operands are names, topics (60 characters on the real server), emails, search words or ids.
 */
export const NARROW_LIMITS = { terms: 32, operatorLength: 64, operandLength: 1_000, operandIds: 1_000 } as const;

export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
}

const invalid = (why: string) => new ApiError('BAD_NARROW', 400, `Invalid narrow: ${why}`);

function checkedOperand(operand: unknown, where: string): NarrowTerm['operand'] {
  if (typeof operand === 'string') {
    if (operand.length > NARROW_LIMITS.operandLength) throw invalid(`${where} is too long (limit: ${NARROW_LIMITS.operandLength} characters)`);
    return operand;
  }
  if (Number.isSafeInteger(operand)) return operand as number;
  // A list of user ids, as `dm` / `pm-with` take.
  if (Array.isArray(operand) && operand.every((id) => Number.isSafeInteger(id))) {
    if (operand.length > NARROW_LIMITS.operandIds) throw invalid(`${where} has too many ids (limit: ${NARROW_LIMITS.operandIds})`);
    return operand as number[];
  }
  throw invalid(`${where} must be a string, an integer or a list of integers`);
}

function checkedOperator(operator: unknown, where: string): string {
  if (typeof operator !== 'string' || operator.length === 0 || operator.length > NARROW_LIMITS.operatorLength) {
    throw invalid(`${where} must be a string of at most ${NARROW_LIMITS.operatorLength} characters`);
  }
  return operator;
}

/**
 * A registration's narrow in one shape: `[operator, operand]` pairs (the documented form) or
 * `{operator, operand}` objects (as GET /messages takes them); negated terms are refused.
 */
export function normalizeNarrow(narrow: readonly unknown[] | undefined): NarrowTerm[] {
  const terms = narrow ?? [];
  if (terms.length > NARROW_LIMITS.terms) throw invalid(`too many terms (limit: ${NARROW_LIMITS.terms})`);
  return terms.map((term, i) => {
    if (Array.isArray(term)) {
      if (term.length !== 2) throw invalid(`narrow[${i}] must be an [operator, operand] pair`);
      return { operator: checkedOperator(term[0], `narrow[${i}][0]`), operand: checkedOperand(term[1], `narrow[${i}][1]`) };
    }
    if (term && typeof term === 'object' && 'operator' in term && 'operand' in term) {
      const t = term as { operator: unknown; operand: unknown; negated?: unknown };
      if (t.negated) throw errors.badRequest('Negated narrow terms are not allowed in an event queue');
      return { operator: checkedOperator(t.operator, `narrow[${i}].operator`), operand: checkedOperand(t.operand, `narrow[${i}].operand`) };
    }
    throw invalid(`narrow[${i}] must be an [operator, operand] pair`);
  });
}
