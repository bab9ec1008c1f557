// The Kubernetes 1.27 OpenAPI schemas, as npm `kubernetes-models@4.3.1` ships them (JSON Schema
// generated from the upstream OpenAPI document; 4.3.x is the Kubernetes 1.27 generation: it has
// 1.27's Container.resizePolicy and not 1.28's Job podReplacementPolicy, and validate.mjs checks
// that on every run). The package's own validate() is lenient about unknown fields, while kubectl
// (since 1.27, server-side field validation) rejects them; so we collect the package's schemas and
// compile them with our own ajv in strict mode: an object schema that lists its properties
// accepts no others, like kubeconform -strict.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);

// Kubernetes resource.Quantity (the OpenAPI pattern of k8s.io/apimachinery).
const QUANTITY =
  /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function newAjv() {
  const ajv = new Ajv({ strict: true, strictTypes: false, strictRequired: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat("byte", { type: "string", validate: (v) => BASE64.test(v) });
  ajv.addFormat("quantity", { type: "string", validate: (v) => QUANTITY.test(v) });
  for (const k of [
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "x-kubernetes-group-version-kind",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-unions",
  ]) {
    ajv.addKeyword(k);
  }
  return ajv;
}

// Object schemas that list properties get additionalProperties: false (unless they say otherwise).
// Walks schema positions only: under `properties` the keys are field names (a field may be called
// `default` or `enum`), under `enum`/`default`/`example` the values are data.
export function makeStrict(schema) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out = { ...schema };
  for (const key of ["properties", "patternProperties", "definitions"]) {
    if (schema[key]) {
      out[key] = Object.fromEntries(Object.entries(schema[key]).map(([k, v]) => [k, makeStrict(v)]));
    }
  }
  for (const key of ["items", "not", "additionalItems"]) {
    if (schema[key] && typeof schema[key] === "object") {
      out[key] = Array.isArray(schema[key]) ? schema[key].map(makeStrict) : makeStrict(schema[key]);
    }
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    out.additionalProperties = makeStrict(schema.additionalProperties);
  }
  for (const key of ["allOf", "anyOf", "oneOf"]) {
    if (Array.isArray(schema[key])) out[key] = schema[key].map(makeStrict);
  }
  if (
    out.properties &&
    out.additionalProperties === undefined &&
    out["x-kubernetes-preserve-unknown-fields"] !== true
  ) {
    out.additionalProperties = false;
  }
  return out;
}

// kubernetes-models drops every key named `description` or `x-kubernetes-*` while generating,
// field names included, so these real Kubernetes 1.27 fields are missing from its schemas. They
// are put back here, with their upstream types (k8s.io/apiextensions-apiserver and
// k8s.io/api/scheduling, 1.27). ERRATA_TESTED is checked on every run: if a fixed package
// already has a field, the run says so instead of silently overriding it.
const APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1";
const ERRATA = {
  [`${APIEXT}.JSONSchemaProps`]: {
    description: { type: "string" },
    "x-kubernetes-embedded-resource": { type: "boolean" },
    "x-kubernetes-int-or-string": { type: "boolean" },
    "x-kubernetes-list-map-keys": { type: "array", items: { type: "string" } },
    "x-kubernetes-list-type": { type: "string", enum: ["atomic", "set", "map"] },
    "x-kubernetes-map-type": { type: "string", enum: ["granular", "atomic"] },
    "x-kubernetes-preserve-unknown-fields": { type: "boolean" },
    "x-kubernetes-validations": { type: "array", items: { $ref: `${APIEXT}.ValidationRule#` } },
  },
  [`${APIEXT}.CustomResourceColumnDefinition`]: { description: { type: "string" } },
  "io.k8s.api.scheduling.v1.PriorityClass": { description: { type: "string" } },
};

function applyErrata(schemas) {
  const notes = [];
  for (const [id, fields] of Object.entries(ERRATA)) {
    const schema = schemas.get(id);
    if (!schema?.properties) throw new Error(`errata: ${id} is not in kubernetes-models`);
    for (const [name, fieldSchema] of Object.entries(fields)) {
      if (schema.properties[name]) notes.push(`errata: ${id}.${name} is already in the package`);
      else schema.properties[name] = fieldSchema;
    }
  }
  return notes;
}

function packageDir(name) {
  return path.dirname(require.resolve(`${name}/package.json`));
}

let cache = null;

// { ajv, byGvk: Map("apiVersion|kind" → schema id), schemas: Map(id → raw schema), version, notes }
export function kubernetesSchemas() {
  if (cache) return cache;
  const validateModule = require("@kubernetes-models/validate");
  const schemas = new Map();
  const original = validateModule.register;
  validateModule.register = (id, schema) => {
    if (!schemas.has(id)) schemas.set(id, schema);
  };
  try {
    for (const pkg of ["@kubernetes-models/apimachinery", "kubernetes-models"]) {
      const dir = path.join(packageDir(pkg), "_schemas");
      for (const f of fs.readdirSync(dir).sort()) {
        if (f.endsWith(".js")) require(path.join(dir, f)).addSchema();
      }
    }
  } finally {
    validateModule.register = original;
  }
  if (schemas.size < 500) throw new Error(`only ${schemas.size} schemas found in kubernetes-models`);
  const notes = applyErrata(schemas);
  const ajv = newAjv();
  const byGvk = new Map();
  for (const [id, schema] of schemas) {
    ajv.addSchema(makeStrict(schema), id);
    const av = schema.properties?.apiVersion?.enum;
    const kind = schema.properties?.kind?.enum;
    if (av?.length === 1 && kind?.length === 1) byGvk.set(`${av[0]}|${kind[0]}`, id);
  }
  const version = JSON.parse(fs.readFileSync(path.join(packageDir("kubernetes-models"), "package.json"), "utf8")).version;
  cache = { ajv, byGvk, schemas, version, notes };
  return cache;
}

// The schema generation must be Kubernetes 1.27: fields added in 1.27 present, 1.28's absent.
export function checkSchemaGeneration({ schemas }) {
  const props = (id) => Object.keys(schemas.get(id)?.properties || {});
  const problems = [];
  if (!props("io.k8s.api.core.v1.Container").includes("resizePolicy")) {
    problems.push("Container.resizePolicy (added in 1.27) is missing: schemas older than 1.27");
  }
  if (props("io.k8s.api.batch.v1.JobSpec").includes("podReplacementPolicy")) {
    problems.push("JobSpec.podReplacementPolicy (added in 1.28) is present: schemas newer than 1.27");
  }
  return problems;
}

// Group/versions every Kubernetes release from 1.27 on serves (GA APIs only: a beta version
// served by 1.27 may be gone in a later release, e.g. flowcontrol v1beta2 in 1.29).
export const SERVED_SINCE_1_27 = new Set([
  "v1",
  "admissionregistration.k8s.io/v1",
  "apiextensions.k8s.io/v1",
  "apiregistration.k8s.io/v1",
  "apps/v1",
  "authentication.k8s.io/v1",
  "authorization.k8s.io/v1",
  "autoscaling/v1",
  "autoscaling/v2",
  "batch/v1",
  "certificates.k8s.io/v1",
  "coordination.k8s.io/v1",
  "discovery.k8s.io/v1",
  "events.k8s.io/v1",
  "networking.k8s.io/v1",
  "node.k8s.io/v1",
  "policy/v1",
  "rbac.authorization.k8s.io/v1",
  "scheduling.k8s.io/v1",
  "storage.k8s.io/v1",
]);

export function formatErrors(errors, max = 8) {
  const seen = new Set();
  const lines = [];
  for (const e of errors || []) {
    // oneOf [ref, null] wrappers repeat the real error; keep the informative ones.
    if (e.keyword === "oneOf" || (e.keyword === "type" && e.params?.type === "null")) continue;
    let msg = `${e.instancePath || "/"} ${e.message}`;
    if (e.keyword === "additionalProperties") msg = `${e.instancePath || "/"}: unknown field "${e.params.additionalProperty}"`;
    if (e.keyword === "enum") msg += ` (${e.params.allowedValues.join(", ")})`;
    if (!seen.has(msg)) {
      seen.add(msg);
      lines.push(msg);
    }
  }
  if (lines.length === 0 && errors?.length) lines.push(`${errors[0].instancePath || "/"} ${errors[0].message}`);
  return lines.slice(0, max).join("; ");
}
