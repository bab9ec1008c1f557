// CustomResourceDefinition checks the OpenAPI schema of the CRD object cannot express (what the
// API server's CRD validation adds: structural schemas, valid defaults, printer columns that point
// at real fields), and validation of custom resources against a CRD's openAPIV3Schema.
import { makeStrict, newAjv, formatErrors } from "./schemas.mjs";

const SCALAR_TYPES = new Set(["string", "integer", "number", "boolean"]);

// Structural schema rules (apiextensions v1): every node has a type unless it is
// x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields; metadata at the root may
// only restrict name and generateName; defaults must be valid against their own schema.
export function structuralProblems(schema, at = "openAPIV3Schema", root = true) {
  const problems = [];
  if (!schema || typeof schema !== "object") return [`${at}: not a schema`];
  const free = schema["x-kubernetes-int-or-string"] || schema["x-kubernetes-preserve-unknown-fields"];
  if (!schema.type && !free) problems.push(`${at}: type is required in a structural schema`);
  if (schema.properties && schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    problems.push(`${at}: properties and additionalProperties are mutually exclusive`);
  }
  if (root) {
    if (schema.type !== "object") problems.push(`${at}: the root must be type: object`);
    const md = schema.properties?.metadata;
    if (md) {
      const extra = Object.keys(md.properties || {}).filter((k) => k !== "name" && k !== "generateName");
      if (extra.length) problems.push(`${at}.metadata: only name and generateName may be specified`);
    }
  }
  if (schema.type === "array" && !schema.items) problems.push(`${at}: an array needs items`);
  for (const [k, v] of Object.entries(schema.properties || {})) {
    problems.push(...structuralProblems(v, `${at}.${k}`, false));
  }
  if (schema.items) problems.push(...structuralProblems(schema.items, `${at}[*]`, false));
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    problems.push(...structuralProblems(schema.additionalProperties, `${at}.*`, false));
  }
  if (schema.default !== undefined) {
    const { default: _d, ...rest } = schema;
    const v = newAjv().compile(toJsonSchema(rest));
    if (!v(schema.default)) problems.push(`${at}: default ${JSON.stringify(schema.default)} is invalid: ${formatErrors(v.errors)}`);
  }
  for (const rule of schema["x-kubernetes-validations"] || []) {
    if (!rule.rule || typeof rule.rule !== "string") problems.push(`${at}: x-kubernetes-validations needs a rule`);
  }
  return problems;
}

// An openAPIV3Schema as ajv JSON Schema, strict the way `kubectl apply` (fieldValidation=Strict)
// is for custom resources: unknown fields are errors except under preserve-unknown-fields.
export function toJsonSchema(schema) {
  const clean = (s) => {
    if (!s || typeof s !== "object" || Array.isArray(s)) return s;
    const out = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === "properties") out.properties = Object.fromEntries(Object.entries(v).map(([n, p]) => [n, clean(p)]));
      else if (k === "items" || k === "additionalProperties" || k === "not") out[k] = clean(v);
      else if (k === "allOf" || k === "anyOf" || k === "oneOf") out[k] = v.map(clean);
      else out[k] = v;
    }
    if (s["x-kubernetes-int-or-string"]) {
      delete out.type;
      out.anyOf = [{ type: "integer" }, { type: "string" }];
    }
    if (s.nullable) {
      if (typeof out.type === "string") out.type = [out.type, "null"];
    }
    return out;
  };
  return makeStrict(clean(schema));
}

// Resolves a printer column's JSONPath (".a.b[*].c", "[0]", "[-1:]" and escaped dots) in the
// schema; returns the schema it reaches and whether it went through an array, or an error.
export function resolveJsonPath(schema, jsonPath) {
  if (!jsonPath.startsWith(".")) return { error: "must start with ." };
  const tokens = [];
  const re = /\.((?:\\\.|[^.[\]])+)|\[([^\]]*)\]/g;
  let m;
  let consumed = 0;
  while ((m = re.exec(jsonPath)) !== null) {
    if (m.index !== consumed) return { error: `cannot parse at "${jsonPath.slice(consumed)}"` };
    consumed = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ field: m[1].replace(/\\\./g, ".") });
    else tokens.push({ index: m[2] });
  }
  if (consumed !== jsonPath.length) return { error: `cannot parse at "${jsonPath.slice(consumed)}"` };
  let node = schema;
  let many = false;
  for (const t of tokens) {
    if (node["x-kubernetes-preserve-unknown-fields"] && !node.properties) return { node: {}, many, opaque: true };
    if (t.field !== undefined) {
      if (node.type !== "object" || !node.properties) {
        // metadata is { type: object } in a CRD; its fields are ObjectMeta's.
        if (node === schema.properties?.metadata) return { node: { type: "string" }, many, opaque: true };
        return { error: `"${t.field}": ${node.type || "untyped"} node has no fields` };
      }
      const next = node.properties[t.field];
      if (!next) return { error: `no field "${t.field}" (has: ${Object.keys(node.properties).join(", ")})` };
      node = next;
    } else {
      if (node.type !== "array") return { error: `[${t.index}] on a ${node.type} node` };
      if (t.index === "*" || t.index.includes(":")) many = true;
      node = node.items;
    }
  }
  return { node, many };
}

const COLUMN_TYPES = {
  integer: (n) => n.type === "integer",
  number: (n) => n.type === "integer" || n.type === "number",
  boolean: (n) => n.type === "boolean",
  date: (n) => n.type === "string" && n.format === "date-time",
  string: (n) => SCALAR_TYPES.has(n.type) || n["x-kubernetes-int-or-string"],
};

export function crdProblems(crd) {
  const problems = [];
  const spec = crd.spec || {};
  const names = spec.names || {};
  if (crd.metadata?.name !== `${names.plural}.${spec.group}`) {
    problems.push(`metadata.name must be <plural>.<group> (${names.plural}.${spec.group})`);
  }
  const versions = spec.versions || [];
  if (versions.filter((v) => v.storage).length !== 1) problems.push("exactly one version must be the storage version");
  for (const v of versions) {
    const at = `versions[${v.name}]`;
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) {
      problems.push(`${at}: openAPIV3Schema is required in apiextensions.k8s.io/v1`);
      continue;
    }
    problems.push(...structuralProblems(schema).map((p) => `${at}: ${p}`));
    for (const col of v.additionalPrinterColumns || []) {
      const r = resolveJsonPath(schema, col.jsonPath);
      const where = `${at}: printer column "${col.name}" (${col.jsonPath})`;
      if (r.error) problems.push(`${where}: ${r.error}`);
      else if (!r.opaque && !COLUMN_TYPES[col.type]?.(r.node)) {
        problems.push(`${where}: a ${col.type} column points at a ${r.node.type}${r.node.format ? ` (${r.node.format})` : ""} field`);
      } else if (r.many && col.type !== "string") {
        problems.push(`${where}: a path with [*] yields several values; only a string column prints them`);
      }
    }
  }
  return problems;
}

// A validator for custom resources of `crd` (by apiVersion), or null if it does not serve it.
export function customResourceValidator(crd) {
  const validators = new Map();
  for (const v of crd.spec.versions) {
    if (!v.served) continue;
    validators.set(`${crd.spec.group}/${v.name}|${crd.spec.names.kind}`, newAjv().compile(toJsonSchema(v.schema.openAPIV3Schema)));
  }
  return validators;
}
