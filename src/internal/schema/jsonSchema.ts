// Schema → the JSON Schema of an object, for the two places the CLI wants one: a tool's
// `inputSchema` (`tools/list`) and the structured-output schema (`--json-schema`, `initialize`
// `jsonSchema`), which the CLI offers the model as the `StructuredOutput` tool's input schema.
// Both must describe an object: the Messages API takes only object schemas as tool inputs.
import { Either, JSONSchema, SchemaAST } from "effect"
import type { JsonObjectSchema } from "../../Tool.js"

/**
 * The JSON Schema of the encoded side of `ast` (what travels as JSON), or why there is none that
 * describes an object.
 *
 * `fromAST` rather than `make`: no `$schema` key (MCP does not want it), and
 * `topLevelReferenceStrategy: "skip"` inlines a top-level `$ref` (a `Schema.Class` would otherwise
 * be `{$ref: "#/$defs/Name"}`, which is not an object schema); shared definitions stay in `$defs`
 * next to it.
 */
export const objectJsonSchema = (ast: SchemaAST.AST): Either.Either<JsonObjectSchema, string> => {
  // `Schema.Struct({})` means "any non-nullish value" to JSONSchema (`anyOf: [object, array]`);
  // as an object schema it means "an object with no fields".
  const encoded = SchemaAST.encodedAST(ast)
  if (
    SchemaAST.isTypeLiteral(encoded) && encoded.propertySignatures.length === 0 && encoded.indexSignatures.length === 0
  ) {
    return Either.right({ type: "object", properties: {}, additionalProperties: false })
  }
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  let schema: JSONSchema.JsonSchema7
  try {
    schema = JSONSchema.fromAST(ast, { definitions, topLevelReferenceStrategy: "skip" })
  } catch (error) {
    // `fromAST` throws for schemas without a JSON Schema (a `Schema.declare` without annotation,
    // bigint, symbols, …): the caller reports it against its own field.
    const reason = error instanceof Error ? error.message : String(error)
    return Either.left(`has no JSON Schema: ${reason.replace(/\s*\n\s*/g, "; ")}`)
  }
  if (!("type" in schema) || schema.type !== "object") {
    return Either.left(`must describe an object (a Schema.Struct), got JSON Schema ${JSON.stringify(schema)}`)
  }
  return Either.right(
    Object.keys(definitions).length === 0
      ? { ...schema, type: "object" }
      : { ...schema, type: "object", $defs: definitions }
  )
}
