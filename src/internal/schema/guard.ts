// A Schema compiled to a plain predicate, for the per-message hot path.
//
// `Schema.is` walks the parser machinery for every value (issue objects, option bags, effect
// checks); on a 1 KB assistant message that costs about twice `JSON.parse`. The messages are
// still described once, as Schemas: this walks the same AST once, up front, and builds closures
// that answer exactly what `Schema.is` answers for the node kinds messages use. Anything else
// (declarations, template literals, unusual index signatures, …) falls back to `Schema.is` for
// that node, so the result never differs — the unit tests check the two agree.
import * as Issues from "./issues.js"
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"

type Check = (u: unknown) => boolean

const hasOwn = Object.prototype.hasOwnProperty

// The JSON kinds of a value, as bits. A type made of them alone (`string`, `number | null`, an
// optional `boolean`, …) is checked inline, one `typeof` and a mask, without a call.
const STRING = 1
const NUMBER = 2
const BOOLEAN = 4
const UNDEFINED = 8
const NULL = 16

const kindOf = (u: unknown): number => {
  switch (typeof u) {
    case "string":
      return STRING
    case "number":
      return NUMBER
    case "boolean":
      return BOOLEAN
    case "undefined":
      return UNDEFINED
    default:
      return u === null ? NULL : 0
  }
}

// The kinds a type admits when it is a union of those kinds alone; 0 otherwise.
const kindsOf = (ast: SchemaAST.AST): number => {
  switch (ast._tag) {
    case "StringKeyword":
      return STRING
    case "NumberKeyword":
      return NUMBER
    case "BooleanKeyword":
      return BOOLEAN
    case "UndefinedKeyword":
      return UNDEFINED
    case "Literal":
      return ast.literal === null ? NULL : 0
    case "Union": {
      let kinds = 0
      for (const member of ast.types) {
        const k = kindsOf(member)
        if (k === 0) return 0
        kinds |= k
      }
      return kinds
    }
    default:
      return 0
  }
}

// A struct's property, compiled: `kinds` (when not 0) or `literal` (when `isLiteral`) answer
// inline what `check` answers.
interface Property {
  readonly name: PropertyKey
  readonly optional: boolean
  readonly check: Check
  readonly kinds: number
  readonly isLiteral: boolean
  readonly literal: unknown
  readonly readable: boolean
  acceptsUndefined: boolean | undefined
}

const property = (ps: SchemaAST.PropertySignature): Property => ({
  name: ps.name,
  optional: ps.isOptional,
  check: compileNode(ps.type),
  kinds: kindsOf(ps.type),
  isLiteral: SchemaAST.isLiteral(ps.type),
  literal: SchemaAST.isLiteral(ps.type) ? ps.type.literal : undefined,
  // A plain object's `u[name]` is its own property unless the name is inherited.
  readable: typeof ps.name === "string" && !(ps.name in Object.prototype),
  // Whether `undefined` passes `check`: asked on first need (a recursive Schema's check
  // cannot run while it is being compiled).
  acceptsUndefined: undefined
})

// `p.check(value)`, inline for the common kinds.
const checks = (p: Property, value: unknown): boolean =>
  p.kinds !== 0 ? (kindOf(value) & p.kinds) !== 0 : p.isLiteral ? value === p.literal : p.check(value)

const isObject = (u: unknown): u is { readonly [key: PropertyKey]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isPlain = (u: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const fallback = (ast: SchemaAST.AST): Check => ParseResult.is(Schema.make(ast))

type LiteralValue = string | number | boolean | null | bigint

// The literal values a property's type admits, when it is a literal or a union of literals.
const literalsOf = (ast: SchemaAST.AST): ReadonlyArray<LiteralValue> | undefined => {
  if (SchemaAST.isLiteral(ast)) return [ast.literal]
  if (SchemaAST.isUnion(ast)) {
    const out: Array<LiteralValue> = []
    for (const member of ast.types) {
      if (!SchemaAST.isLiteral(member)) return undefined
      out.push(member.literal)
    }
    return out
  }
  return undefined
}

// For a union of structs that all have a literal-typed property of the same name, a map from
// that property's value to the members that can match it: one lookup instead of a scan.
const discriminated = (members: ReadonlyArray<SchemaAST.AST>, checks: ReadonlyArray<Check>): Check | undefined => {
  const first = members[0]
  if (first === undefined || !SchemaAST.isTypeLiteral(first)) return undefined
  for (const candidate of first.propertySignatures) {
    if (typeof candidate.name !== "string" || candidate.isOptional) continue
    const name = candidate.name
    const byValue = new Map<unknown, Array<Check>>()
    let usable = true
    members.forEach((member, i) => {
      const check = checks[i]
      const ps = SchemaAST.isTypeLiteral(member)
        ? member.propertySignatures.find((p) => p.name === name && !p.isOptional)
        : undefined
      const values = ps === undefined ? undefined : literalsOf(ps.type)
      if (values === undefined || check === undefined) {
        usable = false
        return
      }
      for (const value of values) {
        const list = byValue.get(value)
        if (list === undefined) byValue.set(value, [check])
        else list.push(check)
      }
    })
    if (!usable) continue
    const readable = !(name in Object.prototype)
    // Usually each value names one member: its check is called directly.
    const single = new Map<unknown, Check>()
    for (const [value, list] of byValue) {
      const [only] = list
      single.set(value, list.length === 1 && only !== undefined ? only : (u) => list.some((check) => check(u)))
    }
    return (u) => {
      if (!isObject(u)) return false
      // As in a struct: one read of a plain object's own property, `hasOwn` otherwise.
      const value = readable && isPlain(u) ? u[name] : hasOwn.call(u, name) ? u[name] : undefined
      // A missing discriminant reads as `undefined`, which no literal (a key of `single`) is.
      const check = single.get(value)
      return check !== undefined && check(u)
    }
  }
  return undefined
}

const compileNode = (ast: SchemaAST.AST): Check => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union": {
      const kinds = kindsOf(ast)
      if (kinds !== 0) return (u) => (kindOf(u) & kinds) !== 0
      const members = ast.types.map(compileNode)
      const fast = discriminated(ast.types, members)
      if (fast !== undefined) return fast
      return (u) => {
        for (const check of members) if (check(u)) return true
        return false
      }
    }
    case "TupleType": {
      const rest = ast.rest[0]
      if (ast.elements.length > 0 || ast.rest.length !== 1 || rest === undefined) return fallback(ast)
      const item = compileNode(rest.type)
      return (u) => {
        if (!Array.isArray(u)) return false
        for (const value of u) if (!item(value)) return false
        return true
      }
    }
    case "TypeLiteral": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
        return (u) => u !== null && u !== undefined
      }
      const index = ast.indexSignatures
      if (index.some((s) => !SchemaAST.isStringKeyword(s.parameter))) return fallback(ast)
      const properties = ast.propertySignatures.map(property)
      const values = index.map((s) => compileNode(s.type))
      const checkValues = values.length > 0 &&
        !index.every((s) => s.type._tag === "UnknownKeyword" || s.type._tag === "AnyKeyword")
      return (u) => {
        if (!isObject(u)) return false
        // One read per property of a plain object (JSON): `hasOwn` only when the value is
        // `undefined`, to tell a missing property from one set to `undefined`.
        const plain = isPlain(u)
        for (const p of properties) {
          if (plain && p.readable) {
            const value = u[p.name]
            if (value !== undefined) {
              if (!checks(p, value)) return false
              continue
            }
            const acceptsUndefined = p.acceptsUndefined ??= p.check(undefined)
            if (p.optional && acceptsUndefined) continue
            if (!hasOwn.call(u, p.name)) {
              if (p.optional) continue
              return false
            }
            if (!acceptsUndefined) return false
            continue
          }
          if (!hasOwn.call(u, p.name)) {
            if (p.optional) continue
            return false
          }
          if (!p.check(u[p.name])) return false
        }
        if (checkValues) {
          for (const key of Object.keys(u)) {
            const value: unknown = Reflect.get(u, key)
            for (const check of values) if (!check(value)) return false
          }
        }
        return true
      }
    }
    case "Refinement": {
      const from = compileNode(ast.from)
      const refinement = ast
      return (u) => from(u) && Option.isNone(refinement.filter(u, SchemaAST.defaultParseOption, refinement))
    }
    case "Suspend": {
      let inner: Check | undefined
      const f = ast.f
      return (u) => (inner ??= compileNode(f()))(u)
    }
    default:
      return fallback(ast)
  }
}

/**
 * A type guard equivalent to `Schema.is(schema)`, compiled once.
 */
export const compile = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => u is A => {
  // By the Schema's own AST first: `typeAST` rebuilds the type side of a transforming AST on
  // every call, which for the `initialize` reply's Schema costs more than checking the reply.
  let check = compiledBySchema.get(schema.ast)
  if (check === undefined) {
    check = compiledCheck(SchemaAST.typeAST(schema.ast))
    compiledBySchema.set(schema.ast, check)
  }
  const checked = check
  return (u: unknown): u is A => checked(u)
}

const compiledBySchema = new WeakMap<SchemaAST.AST, (u: unknown) => boolean>()

// Compiled checks by AST: callers compile per session (a handler's payload, say), and compiling
// walks the whole Schema; the AST of a given Schema is one object for the process's life.
const compiled = new WeakMap<SchemaAST.AST, (u: unknown) => boolean>()
const compiledCheck = (ast: SchemaAST.AST): (u: unknown) => boolean => {
  let check = compiled.get(ast)
  if (check === undefined) {
    check = compileNode(ast)
    compiled.set(ast, check)
  }
  return check
}

/**
 * One variant of a decoder's dispatch table: the compiled guard, and the slow path for values it
 * rejects (the parse error, and that error as text for a `MessageParseError`).
 */
export interface Member<A> {
  readonly is: (u: unknown) => u is A
  /** `u` itself when it is an `A`; otherwise the parse error, whose tree is only built then. */
  readonly validate: (u: unknown) => Either.Either<A, ParseResult.ParseError>
  /** Why `u` is not an `A`, as `TreeFormatter` writes it. */
  readonly explain: (u: unknown) => string
}

/**
 * Compiles one schema into a `Member`. Generic over the schema rather than its `Type` so that a
 * table can be built by mapping over a union's members (a union of schemas gives a union of
 * types; `Schema` itself is invariant in its type).
 */
export const member = <S extends Schema.Schema.AnyNoContext>(schema: S): Member<Schema.Schema.Type<S>> => {
  // Compiled on first use: tables of members are built at import, for every message type, hook
  // event and permission shape, and most of them never see a value in a given process.
  let check: ((u: unknown) => boolean) | undefined
  let slow: ((u: unknown) => Either.Either<Schema.Schema.Type<S>, ParseResult.ParseError>) | undefined
  const is = (u: unknown): u is Schema.Schema.Type<S> => (check ??= compileNode(SchemaAST.typeAST(schema.ast)))(u)
  const validate = (u: unknown): Either.Either<Schema.Schema.Type<S>, ParseResult.ParseError> =>
    is(u) ? Either.right(u) : (slow ??= Schema.validateEither(schema))(u)
  return {
    is,
    validate,
    explain: (u) => {
      const result = validate(u)
      return Either.isLeft(result) ? Issues.describe(result.left) : "invalid"
    }
  }
}

// Transformation-free: the type side and the encoded side are the AST itself. Decided once per
// AST: both sides are rebuilt by walking the AST.
const pureAsts = new WeakMap<SchemaAST.AST, boolean>()
const pure = (ast: SchemaAST.AST): boolean => {
  let verdict = pureAsts.get(ast)
  if (verdict === undefined) {
    verdict = SchemaAST.typeAST(ast) === ast && SchemaAST.encodedAST(ast) === ast
    pureAsts.set(ast, verdict)
  }
  return verdict
}

// Per AST, decided once: every session compiles the same descriptors' codecs.
const keepingExcess = new WeakMap<SchemaAST.AST, boolean>()
const pureKeepingExcess = (ast: SchemaAST.AST): boolean => {
  let verdict = keepingExcess.get(ast)
  if (verdict === undefined) {
    verdict = pure(ast) && keepsExcess(ast)
    keepingExcess.set(ast, verdict)
  }
  return verdict
}

// Whether parsing keeps every property of a valid value: each struct in the Schema has a string
// index signature, which names them all.
const keepsExcess = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.indexSignatures.some((s) => SchemaAST.isStringKeyword(s.parameter)) &&
        ast.propertySignatures.every((p) => keepsExcess(p.type)) &&
        ast.indexSignatures.every((s) => keepsExcess(s.type))
    case "Union":
      return ast.types.every(keepsExcess)
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
    case "UnknownKeyword":
    case "Literal":
      return true
    default:
      return false
  }
}

/**
 * `parse` (a decode or encode whose output is a `T`), answered without parsing for a value the
 * compiled guard accepts when that is exact: a Schema without transformations turns a valid value
 * into an equal one, so the value is its own result (no parse tree, no copy). `excessKept` says
 * whether `parse` keeps properties the Schema does not name (`onExcessProperty: "preserve"`);
 * when it drops them, the shortcut is taken only if every struct keeps them anyway (an index
 * signature). A value the guard refuses goes through `parse`, which says why.
 *
 * @internal
 */
export const fastPath = <T, X, E>(
  schema: Schema.Schema<T, X>,
  parse: (u: unknown) => Either.Either<T, E>,
  options: { readonly excessKept: boolean }
): (u: unknown) => Either.Either<T, E> => {
  const ast = schema.ast
  if (!(options.excessKept ? pure(ast) : pureKeepingExcess(ast))) return parse
  const is = compile(schema)
  return (u) => is(u) ? Either.right(u) : parse(u)
}

/**
 * A type with no struct, declaration, transformation or suspension inside: keywords, literals,
 * and unions, refinements and tuples of them. Parsing one keeps the value as it is, whatever the
 * parse options (`onExcessProperty` has no struct to apply to), so its guard decides the parse.
 *
 * @internal
 */
export const flat = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "Literal":
      return true
    case "Union":
      return ast.types.every(flat)
    case "Refinement":
      return flat(ast.from)
    case "TupleType":
      return ast.elements.every((e) => flat(e.type)) && ast.rest.every((r) => flat(r.type))
    default:
      return false
  }
}

/**
 * A shortcut for parsing a struct whose parse options refuse excess properties: `true` only when
 * the parse surely succeeds and returns a value equal to `u` (a plain object whose own keys are
 * all properties of the struct with a flat type, every required property among them, each value
 * accepted by its property's compiled guard). `false` decides nothing: the caller parses, which
 * says why. A struct with index signatures, or not a struct, is never shortcut.
 *
 * @internal
 */
export const flatStructAccepts = (ast: SchemaAST.AST): (u: unknown) => boolean => {
  if (!SchemaAST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) return () => false
  const fields = new Map<string, { readonly check: Check; readonly required: boolean }>()
  let required = 0
  for (const ps of ast.propertySignatures) {
    if (!ps.isOptional) required++
    if (typeof ps.name === "string" && flat(ps.type)) {
      fields.set(ps.name, { check: compileNode(ps.type), required: !ps.isOptional })
    }
  }
  return (u) => {
    if (!isObject(u) || !isPlain(u)) return false
    let requiredSeen = 0
    for (const key of Reflect.ownKeys(u)) {
      if (typeof key !== "string") return false
      const field = fields.get(key)
      if (field === undefined || !field.check(u[key])) return false
      if (field.required) requiredSeen++
    }
    return requiredSeen === required
  }
}

/**
 * `u` when it is a plain object (a JSON object's prototype, or none), for a check written by hand
 * that accepts a Schema's common shape and leaves anything else to the Schema; `undefined`
 * otherwise.
 *
 * @internal
 */
export const plainObject = (u: unknown): { readonly [key: PropertyKey]: unknown } | undefined =>
  isObject(u) && isPlain(u) ? u : undefined

/**
 * A unary function built on its first call rather than where it is defined: a parser
 * (`Schema.decodeUnknown(schema)`, `Schema.is(schema)`, `fastPath(…)`) walks its whole Schema when
 * made, and a module's parsers are defined at import, when the process may never parse what they
 * describe. After the first call it costs one closure call.
 *
 * @internal
 */
export const lazily = <A, B>(make: () => (a: A) => B): (a: A) => B => {
  let f: ((a: A) => B) | undefined
  return (a) => (f ??= make())(a)
}
