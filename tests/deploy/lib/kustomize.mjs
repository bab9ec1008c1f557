// A small kustomize: the subset deploy/kubernetes uses, so the tests render the overlays without a
// kustomize binary (a fresh Debian machine has none). Supported in kustomization.yaml:
//   resources:  files (one or more YAML documents) and directories holding a kustomization.yaml
//   patches:    JSON 6902 operations (add, replace, remove, test), inline (`patch: |`) or from a
//               file (`path:`), applied to the objects matched by `target` (group, version, kind,
//               name, namespace)
// Anything else is an error, not silently ignored: extend this file together with the manifests.
// When a real kustomize is on the machine, validate.mjs compares both renderings.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const SUPPORTED_KEYS = new Set(["apiVersion", "kind", "resources", "patches"]);

// Kubernetes reads YAML with go-yaml's 1.1 rules (0440 is octal, `yes` a boolean); so do we.
export function parseYamlDocuments(text, file) {
  const docs = YAML.parseAllDocuments(text, { version: "1.1", uniqueKeys: true });
  const out = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new Error(`${file}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
    }
    const value = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

export function findKustomization(dir) {
  for (const name of KUSTOMIZATION_FILES) {
    const f = path.join(dir, name);
    if (fs.existsSync(f)) return f;
  }
  return null;
}

function groupOf(apiVersion) {
  const i = apiVersion.indexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}
function versionOf(apiVersion) {
  const i = apiVersion.indexOf("/");
  return i < 0 ? apiVersion : apiVersion.slice(i + 1);
}

function matches(target, obj) {
  const api = String(obj.apiVersion || "");
  if (target.group !== undefined && target.group !== groupOf(api)) return false;
  if (target.version !== undefined && target.version !== versionOf(api)) return false;
  if (target.kind !== undefined && target.kind !== obj.kind) return false;
  const md = obj.metadata || {};
  if (target.name !== undefined && target.name !== md.name) return false;
  if (target.namespace !== undefined && target.namespace !== md.namespace) return false;
  for (const k of Object.keys(target)) {
    if (!["group", "version", "kind", "name", "namespace"].includes(k)) {
      throw new Error(`patch target field "${k}" is not supported by tests/deploy/lib/kustomize.mjs`);
    }
  }
  return true;
}

// RFC 6901 pointer → tokens.
function pointer(p) {
  if (p === "") return [];
  if (!p.startsWith("/")) throw new Error(`JSON pointer "${p}" must start with /`);
  return p.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function applyOp(doc, op, where) {
  const tokens = pointer(op.path);
  if (tokens.length === 0) throw new Error(`${where}: patching the whole document is not supported`);
  let parent = doc;
  for (const t of tokens.slice(0, -1)) {
    const next = Array.isArray(parent) ? parent[Number(t)] : parent?.[t];
    if (next === undefined || next === null || typeof next !== "object") {
      throw new Error(`${where}: ${op.op} ${op.path}: "${t}" does not exist`);
    }
    parent = next;
  }
  const last = tokens[tokens.length - 1];
  const clone = (v) => JSON.parse(JSON.stringify(v));
  switch (op.op) {
    case "add":
      if (Array.isArray(parent)) {
        if (last === "-") parent.push(clone(op.value));
        else {
          const i = Number(last);
          if (!Number.isInteger(i) || i < 0 || i > parent.length) {
            throw new Error(`${where}: add ${op.path}: index out of range`);
          }
          parent.splice(i, 0, clone(op.value));
        }
      } else parent[last] = clone(op.value);
      return;
    case "replace":
    case "remove": {
      const exists = Array.isArray(parent)
        ? Number(last) >= 0 && Number(last) < parent.length
        : Object.prototype.hasOwnProperty.call(parent, last);
      if (!exists) throw new Error(`${where}: ${op.op} ${op.path}: no such member`);
      if (op.op === "replace") parent[last] = clone(op.value);
      else if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
      return;
    }
    case "test":
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) {
        throw new Error(`${where}: test ${op.path} failed`);
      }
      return;
    default:
      throw new Error(`${where}: JSON patch op "${op.op}" is not supported`);
  }
}

// Renders the kustomization in `dir` to a list of objects (in resource order, like kustomize).
export function render(dir, seen = new Set()) {
  const kfile = findKustomization(dir);
  if (!kfile) throw new Error(`${dir}: no kustomization.yaml`);
  const real = fs.realpathSync(dir);
  if (seen.has(real)) throw new Error(`${dir}: kustomization cycle`);
  seen = new Set(seen).add(real);
  const [k] = parseYamlDocuments(fs.readFileSync(kfile, "utf8"), kfile);
  for (const key of Object.keys(k || {})) {
    if (!SUPPORTED_KEYS.has(key)) {
      throw new Error(`${kfile}: "${key}" is not supported by tests/deploy/lib/kustomize.mjs`);
    }
  }
  let objects = [];
  for (const r of k.resources || []) {
    const p = path.resolve(dir, r);
    if (!fs.existsSync(p)) throw new Error(`${kfile}: resource ${r} does not exist`);
    if (fs.statSync(p).isDirectory()) {
      objects = objects.concat(render(p, seen));
    } else {
      // kustomize's default load restrictor: files must be inside the kustomization's root.
      if (path.relative(real, fs.realpathSync(p)).startsWith("..")) {
        throw new Error(`${kfile}: file ${r} is outside the kustomization root`);
      }
      for (const o of parseYamlDocuments(fs.readFileSync(p, "utf8"), p)) {
        o.__source = path.relative(process.cwd(), p);
        objects.push(o);
      }
    }
  }
  const ids = new Set();
  for (const o of objects) {
    const id = `${o.apiVersion}|${o.kind}|${o.metadata?.namespace || ""}|${o.metadata?.name}`;
    if (ids.has(id)) throw new Error(`${kfile}: ${id} is defined twice`);
    ids.add(id);
  }
  (k.patches || []).forEach((patch, n) => {
    const where = `${kfile} patches[${n}]`;
    let text = patch.patch;
    if (patch.path !== undefined) text = fs.readFileSync(path.resolve(dir, patch.path), "utf8");
    if (typeof text !== "string") throw new Error(`${where}: needs patch or path`);
    const [ops] = parseYamlDocuments(text, where);
    if (!Array.isArray(ops)) {
      throw new Error(`${where}: only JSON 6902 patches (a list of operations) are supported`);
    }
    const targets = objects.filter((o) => matches(patch.target || {}, o));
    if (targets.length === 0) throw new Error(`${where}: the target matches no resource`);
    for (const o of targets) for (const op of ops) applyOp(o, op, where);
  });
  return objects;
}

// The objects without our bookkeeping (for comparisons and output).
export function strip(o) {
  const { __source, ...rest } = o;
  return rest;
}
