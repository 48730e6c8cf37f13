import {
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  getDirectiveValues,
  getOperationAST,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  OperationTypeNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The root fields the operation `operationName` of `document` will run when it is a mutation: each
 * response key once (`a: createTask(…) b: createTask(…)` is two, a field repeated under one key is
 * one, as GraphQL merges it), through fragments and inline fragments, leaving out what `@skip` or
 * `@include` leaves out with these `variables` (as execution will), `__typename` not counted. 0 for
 * a query, a subscription, or a document whose operation cannot be chosen (validation or execution
 * refuses it).
 */
export function mutationFields(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> = {}): number {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== OperationTypeNode.MUTATION) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const keys = new Set<string>();
  const seen = new Set<string>();
  const collect = (selections: SelectionSetNode): void => {
    for (const selection of selections.selections) {
      if (!runs(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename') keys.add(selection.alias?.value ?? selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        // A fragment spread twice adds nothing more (and a cycle, which validation refuses, cannot loop).
        if (fragment && !seen.has(fragment.name.value)) {
          seen.add(fragment.name.value);
          collect(fragment.selectionSet);
        }
      }
    }
  };
  collect(operation.selectionSet);
  return keys.size;
}

/**
 * Whether execution runs a selection: not when `@skip(if: true)` or `@include(if: false)`, read with
 * the request's variables by graphql-js's own `getDirectiveValues`. A directive whose argument
 * cannot be read (a variable missing or not a Boolean) counts the selection: execution refuses the
 * document anyway.
 */
function runs(node: { readonly directives?: readonly DirectiveNode[] }, variables: Record<string, unknown>): boolean {
  try {
    if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.['if'] === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.['if'] !== false;
  } catch {
    return true;
  }
}
