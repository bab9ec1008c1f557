#!/usr/bin/env node
// Validates deploy/ against the Kubernetes 1.27 OpenAPI schemas (npm kubernetes-models@4.3.1,
// compiled strictly with ajv; lib/schemas.mjs) and against what the API server and `cronledger run`
// need beyond the schemas (lib/crd.mjs, lib/checks.mjs):
//   * every kustomization under deploy/kubernetes, rendered (lib/kustomize.mjs; compared with
//     `kubectl kustomize` when a kubectl is on the machine), every object;
//   * the CRD: the apiextensions v1 schema, structural-schema rules, defaults, printer columns;
//   * each overlay as a whole: flags ↔ ports/probes/volumes, Pod Security "restricted", RBAC equal
//     to what the mode requests (nothing missing, nothing more); relay Deployments (Kafka mode)
//     with their own exact RBAC, publishing the topic the StatefulSet reads;
//   * deploy/samples: CronJobs against the CRD's openAPIV3Schema and the batch/v1 CronJob schema;
//   * deploy/kafka: Strimzi KafkaTopics (no registry ships Strimzi's schema; see kafkaTopicSchema);
//   * fixtures/invalid: manifests that must be rejected, each with the reason it must give.
// Usage: node tests/deploy/validate.mjs [--root REPO] [--no-kubectl]. Exit 0 when all pass.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { check, finish } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const root = path.resolve(argv.includes("--root") ? argv[argv.indexOf("--root") + 1] : path.join(here, "../.."));
const useKubectl = !argv.includes("--no-kubectl");

let deps;
try {
  deps = await Promise.all([
    import("./lib/schemas.mjs"),
    import("./lib/kustomize.mjs"),
    import("./lib/crd.mjs"),
    import("./lib/checks.mjs"),
  ]);
} catch (e) {
  console.error(`validate.mjs: ${e.message}\n` +
    "tests/deploy/node_modules is missing or stale: run scripts/install-deps.sh --test " +
    "(or npm ci --prefix tests/deploy)");
  process.exit(1);
}
const [{ kubernetesSchemas, checkSchemaGeneration }, { render, strip, parseYamlDocuments, findKustomization },
  { crdProblems, customResourceValidator, toJsonSchema }, { builtinObjectProblems, objectMetaProblems, overlayProblems }] = deps;
const { newAjv, formatErrors } = deps[0];

const rel = (p) => path.relative(root, p) || ".";
const describe = (o) => `${o.kind || "?"} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name || "?"}`;

const k8s = kubernetesSchemas();
check(`schemas: kubernetes-models ${k8s.version} is the Kubernetes 1.27 generation`, checkSchemaGeneration(k8s));
for (const n of k8s.notes) console.log(`# ${n}`);

// Strimzi KafkaTopic kafka.strimzi.io/v1beta2: the spec fields of Strimzi's CRD (partitions,
// replicas, config, topicName), transcribed — no npm or Debian package ships its schema.
const kafkaTopicSchema = toJsonSchema({
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      properties: {
        partitions: { type: "integer", minimum: 1 },
        replicas: { type: "integer", minimum: 1, maximum: 32767 },
        config: {
          type: "object",
          additionalProperties: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "number" }, { type: "boolean" }] },
        },
        topicName: { type: "string" },
      },
    },
  },
});
const validateKafkaTopic = newAjv().compile(kafkaTopicSchema);

// CRDs found in deploy/kubernetes: "group/version|Kind" → validator.
const customResources = new Map();

// Problems of one document, whatever it is.
function documentProblems(o) {
  if (o?.kind === "List" && o.apiVersion === "v1") return (o.items || []).flatMap((i) => documentProblems(i).map((p) => `${describe(i)}: ${p}`));
  const crv = customResources.get(`${o?.apiVersion}|${o?.kind}`);
  if (crv) {
    const p = [];
    if (!crv(o)) p.push(`CRD schema: ${formatErrors(crv.errors)}`);
    p.push(...objectMetaProblems(o, k8s));
    if (o.kind === "CronJob") {
      // Same shape as batch/v1 by design: the built-in schema checks the whole jobTemplate.
      const batch = k8s.ajv.getSchema(k8s.byGvk.get("batch/v1|CronJob"));
      if (!batch({ ...o, apiVersion: "batch/v1" })) p.push(`as batch/v1 CronJob: ${formatErrors(batch.errors)}`);
    }
    return p;
  }
  if (o?.apiVersion === "kafka.strimzi.io/v1beta2" && o.kind === "KafkaTopic") {
    const p = [];
    if (!validateKafkaTopic(o)) p.push(`KafkaTopic: ${formatErrors(validateKafkaTopic.errors)}`);
    p.push(...objectMetaProblems(o, k8s));
    if (!o.metadata?.labels?.["strimzi.io/cluster"]) p.push("KafkaTopic needs the strimzi.io/cluster label (the Topic Operator ignores it otherwise)");
    const isr = Number(o.spec?.config?.["min.insync.replicas"]);
    if (o.spec?.replicas && isr > o.spec.replicas) {
      p.push(`min.insync.replicas ${isr} > replicas ${o.spec.replicas}: every acks=all write would fail`);
    }
    return p;
  }
  const p = builtinObjectProblems(o, k8s);
  if (o?.kind === "CustomResourceDefinition" && p.length === 0) p.push(...crdProblems(o));
  return p;
}

function kustomizationDirs(dir) {
  const out = [];
  if (findKustomization(dir)) out.push(dir);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...kustomizationDirs(path.join(dir, e.name)));
  }
  return out;
}

function kubectlKustomize(dir) {
  const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8", timeout: 30000 });
  if (r.error || r.status !== 0) return { error: r.error?.message || r.stderr.trim() };
  return { objects: parseYamlDocuments(r.stdout, `kubectl kustomize ${dir}`) };
}
const kubectlWorks = useKubectl && spawnSync("kubectl", ["kustomize", "--help"], { encoding: "utf8", timeout: 30000 }).status === 0;
if (!kubectlWorks) console.log("# no kubectl with kustomize here: renderings are not cross-checked (lib/kustomize.mjs only)");

function compareRenders(ours, theirs) {
  const key = (o) => `${o.apiVersion}|${o.kind}|${o.metadata?.namespace || ""}|${o.metadata?.name}`;
  const canon = (v) => JSON.stringify(v, (k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
  const a = new Map(ours.map((o) => [key(o), canon(strip(o))]));
  const b = new Map(theirs.map((o) => [key(o), canon(o)]));
  const p = [];
  for (const [k, v] of a) if (b.get(k) !== v) p.push(`${k}: differs from kubectl kustomize (or missing there)`);
  for (const k of b.keys()) if (!a.has(k)) p.push(`${k}: only in kubectl kustomize's rendering`);
  return p;
}

// Renders and checks one kustomization; returns its objects (or null).
function checkKustomization(dir, { overlay }) {
  let objects;
  try {
    objects = render(dir);
  } catch (e) {
    check(`${rel(dir)}: renders`, [e.message]);
    return null;
  }
  check(`${rel(dir)}: renders (${objects.length} objects)`, []);
  if (kubectlWorks) {
    const k = kubectlKustomize(dir);
    check(`${rel(dir)}: same rendering as kubectl kustomize`, k.error ? [`kubectl kustomize: ${k.error}`] : compareRenders(objects, k.objects));
  }
  for (const o of objects) {
    if (o.kind === "CustomResourceDefinition") {
      try {
        for (const [k, v] of customResourceValidator(o)) customResources.set(k, v);
      } catch (e) {
        check(`${rel(dir)}: ${describe(o)}: schema compiles`, [e.message]);
      }
    }
  }
  for (const o of objects) check(`${rel(dir)}: ${describe(o)} (${o.__source})`, documentProblems(strip(o)));
  if (overlay) check(`${rel(dir)}: the StatefulSet's flags, ports, probes, volumes, security and RBAC agree`, overlayProblems(objects));
  return objects;
}

// ---- deploy/kubernetes ----
const kube = path.join(root, "deploy/kubernetes");
const dirs = kustomizationDirs(kube).sort((a, b) => (a.includes("/overlays/") ? 1 : 0) - (b.includes("/overlays/") ? 1 : 0) || a.localeCompare(b));
const overlays = dirs.filter((d) => path.dirname(d) === path.join(kube, "overlays"));
check("deploy/kubernetes: has the controller and shadow overlays",
  ["controller", "shadow"].filter((n) => !overlays.includes(path.join(kube, "overlays", n))).map((n) => `overlays/${n} is missing`));
for (const d of dirs) checkKustomization(d, { overlay: overlays.includes(d) });
// Every manifest file is part of some kustomization (nothing lies around unvalidated).
const listed = new Set();
for (const d of dirs) {
  const [k] = parseYamlDocuments(fs.readFileSync(findKustomization(d), "utf8"), d);
  for (const r of k.resources || []) listed.add(path.resolve(d, r));
}
const stray = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.ya?ml$/.test(e.name) && !/^kustomization\.ya?ml$/.test(e.name) && !listed.has(p)) stray.push(rel(p));
  }
})(kube);
check("deploy/kubernetes: every manifest belongs to a kustomization", stray.map((s) => `${s} is in no kustomization's resources`));
check("deploy/kubernetes: the CronJob CRD is defined", customResources.has("cronledger.io/v1|CronJob") ? [] : ["no CRD serves cronledger.io/v1 CronJob"]);

// ---- deploy/samples, deploy/kafka ----
function manifestFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return manifestFiles(p);
    return /\.(ya?ml|json)$/.test(e.name) ? [p] : [];
  }).sort();
}
function checkFile(file) {
  let docs;
  try {
    docs = file.endsWith(".json") ? [JSON.parse(fs.readFileSync(file, "utf8"))] : parseYamlDocuments(fs.readFileSync(file, "utf8"), file);
  } catch (e) {
    check(`${rel(file)}: parses`, [e.message]);
    return;
  }
  for (const o of docs) check(`${rel(file)}: ${describe(o)}`, documentProblems(o));
}
const samples = manifestFiles(path.join(root, "deploy/samples"));
check("deploy/samples: has samples", samples.length ? [] : ["no sample manifests found"]);
samples.forEach(checkFile);
manifestFiles(path.join(root, "deploy/kafka")).forEach(checkFile);

// ---- fixtures that must be rejected ----
// A file's first line says `# expect: <text>`; a directory (an overlay) has it in its
// kustomization.yaml. Each must fail, and with that reason.
const fixtures = path.join(here, "fixtures/invalid");
const fixtureEntries = fs.readdirSync(fixtures).sort();
check("fixtures: there are invalid fixtures", fixtureEntries.length >= 5 ? [] : ["fewer than 5 invalid fixtures"]);
for (const name of fixtureEntries) {
  const p = path.join(fixtures, name);
  const isDir = fs.statSync(p).isDirectory();
  const text = fs.readFileSync(isDir ? findKustomization(p) : p, "utf8");
  const expect = /^# expect: (.+)$/m.exec(text)?.[1].trim();
  let problems = [];
  try {
    if (isDir) {
      const objects = render(p);
      problems = objects.flatMap((o) => documentProblems(strip(o))).concat(overlayProblems(objects));
    } else {
      problems = parseYamlDocuments(text, p).flatMap((o) => documentProblems(o));
    }
  } catch (e) {
    problems = [e.message];
  }
  const why = [];
  if (!expect) why.push("the fixture has no `# expect:` line");
  else if (problems.length === 0) why.push(`accepted, but it must be rejected with "${expect}"`);
  else if (!problems.some((x) => x.includes(expect))) why.push(`rejected for another reason than "${expect}": ${problems.join(" | ")}`);
  check(`fixtures/invalid/${name}: rejected (${expect})`, why);
}

finish();
