import {
  type ASTVisitor,
  type DocumentNode,
  type EnumValueNode,
  getNullableType,
  GraphQLError,
  GraphQLString,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isSchema,
  isTypeSubTypeOf,
  Kind,
  specifiedRules,
  type GraphQLInputType,
  type ValidationContext,
  type ValidationRule,
  type VariableDefinitionNode,
  type ValueNode,
  typeFromAST,
  TypeInfo,
  validate as specifiedValidate,
  VariablesInAllowedPositionRule,
  visit,
  visitWithTypeInfo,
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
  let schema: GraphQLSchema | undefined;
  return {
    onSchemaChange({ schema: changed }: { schema: unknown }) {
      if (isSchema(changed)) schema = changed;
    },
    onParse() {
      return ({ result, replaceParseResult }: { result: unknown; replaceParseResult: (document: DocumentNode) => void }) => {
        if (schema && isDocument(result)) replaceParseResult(enumListLiterals(schema, result));
      };
    },
    onValidate({ setValidationFn }) {
      setValidationFn((schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[], options?: { maxErrors?: number }, typeInfo?: TypeInfo) => {
        const v1Rules = (rules ?? specifiedRules).map((rule) => (rule === VariablesInAllowedPositionRule ? variablesInAllowedPositionV1 : rule));
        return specifiedValidate(schema, document, v1Rules, options, typeInfo);
      });
    },
  };
}

function isDocument(value: unknown): value is DocumentNode {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === Kind.DOCUMENT;
}

/**
 * A v1 query wrote `status: "todo"` (or `"todo,blocked"`) when `status` was a `String`; now that it is a
 * list of `TaskStatus`, such a string literal becomes the list of enum values it names, so the query
 * keeps working. A literal that names no value is left as it was, and validation refuses it.
 */
function enumListLiterals(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        const type = getNullableType(typeInfo.getInputType());
        if (node.value.kind !== Kind.STRING || !isListType(type)) return undefined;
        const item = getNullableType(type.ofType);
        if (!isEnumType(item)) return undefined;
        const names = node.value.value.split(',').map((name) => name.trim()).filter(Boolean);
        if (names.length === 0 || names.some((name) => item.getValue(name) === undefined)) return undefined;
        const values = names.map((name): EnumValueNode => ({ kind: Kind.ENUM, value: name }));
        return { ...node, value: { kind: Kind.LIST, values } };
      },
    }),
  );
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
