import {
  type ASTVisitor,
  type DocumentNode,
  getNullableType,
  GraphQLError,
  GraphQLString,
  type GraphQLSchema,
  isListType,
  isNonNullType,
  isTypeSubTypeOf,
  Kind,
  specifiedRules,
  type GraphQLInputType,
  type ValidationContext,
  type ValidationRule,
  type VariableDefinitionNode,
  type ValueNode,
  typeFromAST,
  type TypeInfo,
  validate as specifiedValidate,
  VariablesInAllowedPositionRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * List filters (`status`, `labels`, `types`, `fields`) were `String` arguments taking the REST
 * comma form until they became lists. A v1 query that declares its variable `String`
 * (`query ($l: String) { tasks(labels: $l) … }`) must keep working, so this replaces GraphQL's
 * VariablesInAllowedPosition rule with the same rule that also lets a `String` variable stand in a
 * list's place. Execution hands such a variable's value through unchanged, and the operation
 * splits the comma form as REST does.
 */
export function v1ListVariables(): Plugin {
  return {
    onValidate({ setValidationFn }) {
      setValidationFn((schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[], options?: { maxErrors?: number }, typeInfo?: TypeInfo) => {
        const v1Rules = (rules ?? specifiedRules).map((rule) => (rule === VariablesInAllowedPositionRule ? variablesInAllowedPositionV1 : rule));
        return specifiedValidate(schema, document, v1Rules, options, typeInfo);
      });
    },
  };
}

/** GraphQL's VariablesInAllowedPosition, plus: a `String` variable where a list is expected. */
const variablesInAllowedPositionV1: ValidationRule = (context: ValidationContext): ASTVisitor => {
  let definitions = new Map<string, VariableDefinitionNode>();
  return {
    OperationDefinition: {
      enter() {
        definitions = new Map();
      },
      leave(operation) {
        const schema = context.getSchema();
        for (const { node, type, defaultValue } of context.getRecursiveVariableUsages(operation)) {
          const definition = definitions.get(node.name.value);
          if (!definition || !type) continue;
          const variableType = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
          if (!variableType || allowed(schema, variableType, definition.defaultValue, type, defaultValue)) continue;
          context.reportError(
            new GraphQLError(`Variable "$${node.name.value}" of type "${String(variableType)}" used in position expecting type "${String(type)}".`, {
              nodes: [definition, node],
            }),
          );
        }
      },
    },
    VariableDefinition(node) {
      definitions.set(node.variable.name.value, node);
    },
  };
};

function allowed(schema: GraphQLSchema, variableType: GraphQLInputType, variableDefault: ValueNode | undefined, locationType: GraphQLInputType, locationDefault: unknown): boolean {
  if (getNullableType(variableType) === GraphQLString && isListType(getNullableType(locationType))) return !isNonNullType(locationType) || isNonNullType(variableType);
  if (isNonNullType(locationType) && !isNonNullType(variableType)) {
    const hasDefault = (variableDefault !== undefined && variableDefault.kind !== Kind.NULL) || locationDefault !== undefined;
    return hasDefault && isTypeSubTypeOf(schema, variableType, locationType.ofType);
  }
  return isTypeSubTypeOf(schema, variableType, locationType);
}
