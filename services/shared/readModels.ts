/**
 * Finding a read model's live physical collection. A read model is read through its alias
 * (switched by `marquee replay` after a rebuild); before any alias is set, the projection's
 * default `${name}_v${version}` collection is the live one. The rule lives with the projection
 * runner (projections/collections.ts), which follows the alias too.
 */
export { resolveCollection } from '../../projections/collections.ts';
