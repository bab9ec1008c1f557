// Checks of one object (schema, served API, names) and of one rendered overlay as a whole (the
// StatefulSet's flags against its ports, probes, volumes and RBAC), shared by validate.mjs for the
// real manifests and for the fixtures that must be rejected.
import { SERVED_SINCE_1_27, formatErrors } from "./schemas.mjs";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_KINDS = new Set(["Namespace", "Service"]);
const PATH_SEGMENT_KINDS = new Set(["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]);
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"]);

function nameProblems(o) {
  const p = [];
  const name = o.metadata?.name;
  if (!name) return ["metadata.name is required"];
  if (PATH_SEGMENT_KINDS.has(o.kind)) {
    if (/[/%]/.test(name) || name === "." || name === "..") p.push(`metadata.name "${name}" is not a valid path segment`);
  } else if (LABEL_KINDS.has(o.kind)) {
    if (!(DNS1123_LABEL.test(name) && name.length <= 63)) p.push(`metadata.name "${name}" must be a DNS-1123 label`);
  } else if (!(DNS1123_SUBDOMAIN.test(name) && name.length <= 253)) {
    p.push(`metadata.name "${name}" must be a DNS-1123 subdomain`);
  }
  for (const [k, v] of Object.entries(o.metadata?.labels || {})) {
    const [prefix, n] = k.includes("/") ? k.split("/", 2) : [null, k];
    if ((prefix !== null && !DNS1123_SUBDOMAIN.test(prefix)) || !LABEL_NAME.test(n) || n.length > 63) {
      p.push(`label key "${k}" is invalid`);
    }
    if (typeof v !== "string" || !LABEL_VALUE.test(v) || v.length > 63) p.push(`label "${k}" has an invalid value`);
  }
  if (CLUSTER_SCOPED.has(o.kind) && o.metadata?.namespace) p.push(`${o.kind} is cluster-scoped: no namespace`);
  return p;
}

// Schema + served API + names for one built-in object. `k8s` is kubernetesSchemas().
export function builtinObjectProblems(o, k8s) {
  if (!o || typeof o !== "object" || !o.apiVersion || !o.kind) return ["apiVersion and kind are required"];
  if (!SERVED_SINCE_1_27.has(o.apiVersion)) {
    return [`${o.apiVersion} is not an API every Kubernetes release from 1.27 on serves`];
  }
  const id = k8s.byGvk.get(`${o.apiVersion}|${o.kind}`);
  if (!id) return [`${o.apiVersion} ${o.kind}: no such kind in the Kubernetes 1.27 schemas`];
  const validate = k8s.ajv.getSchema(id);
  const problems = [];
  if (!validate(o)) problems.push(formatErrors(validate.errors));
  problems.push(...nameProblems(o));
  for (const rule of o.rules || []) {
    for (const f of ["apiGroups", "resources", "verbs", "nonResourceURLs"]) {
      if ((rule[f] || []).includes("*")) problems.push(`RBAC rule with "*" in ${f}: name what is needed`);
    }
  }
  return problems;
}

// Metadata of a custom resource: ObjectMeta's schema plus the name rules.
export function objectMetaProblems(o, k8s) {
  const v = k8s.ajv.getSchema("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  const p = [];
  if (!v(o.metadata || {})) p.push(`metadata: ${formatErrors(v.errors)}`);
  return p.concat(nameProblems(o));
}

// ---- a rendered overlay as a whole ----

// A container's args as the kubelet passes them: $(VAR) expanded from the container's env
// (plain values and the downward API's metadata.namespace / metadata.name).
export function expandedArgs(container, pod) {
  const env = new Map();
  for (const e of container.env || []) {
    if (e.value !== undefined) env.set(e.name, e.value);
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === "metadata.namespace") env.set(e.name, pod.namespace);
    if (field === "metadata.name") env.set(e.name, pod.name);
  }
  return (container.args || []).map((a) =>
    a.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) => (m === "$$" ? "$" : env.has(name) ? env.get(name) : m)));
}

export function parseArgs(args) {
  const flags = new Map();
  const switches = new Set();
  for (const a of args.slice(1)) {
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(a);
    if (!m) continue;
    if (m[2] === undefined) switches.add(m[1]);
    else flags.set(m[1], m[2]);
  }
  return { command: args[0], flags, switches };
}

function portOf(bind) {
  const m = /:(\d+)$/.exec(bind || "");
  return m ? Number(m[1]) : null;
}

// The permissions granted to a ServiceAccount by the render's (Cluster)Role(Binding)s, as
// "group|resource|verb|namespace|resourceName" strings ("*" = any namespace / any name).
export function grantedPermissions(objects, saNamespace, saName) {
  const granted = new Set();
  const roles = new Map(objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
    .map((o) => [`${o.kind}|${o.metadata.namespace || ""}|${o.metadata.name}`, o]));
  const problems = [];
  for (const b of objects.filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")) {
    const bound = (b.subjects || []).some((s) => s.kind === "ServiceAccount" && s.name === saName && s.namespace === saNamespace);
    if (!bound) continue;
    const roleNs = b.roleRef.kind === "Role" ? b.metadata.namespace : "";
    const role = roles.get(`${b.roleRef.kind}|${roleNs}|${b.roleRef.name}`);
    if (!role) {
      problems.push(`${b.kind} ${b.metadata.name} refers to ${b.roleRef.kind} ${b.roleRef.name}, which is not in the render`);
      continue;
    }
    const ns = b.kind === "RoleBinding" ? b.metadata.namespace : "*";
    for (const r of role.rules || []) {
      for (const g of r.apiGroups || []) for (const res of r.resources || []) for (const v of r.verbs || []) {
        for (const rn of r.resourceNames?.length ? r.resourceNames : ["*"]) granted.add(`${g}|${res}|${v}|${ns}|${rn}`);
      }
    }
  }
  return { granted, problems };
}

function covers(granted, need) {
  const [g, res, v, ns, rn] = need.split("|");
  for (const x of granted) {
    const [G, R, V, N, RN] = x.split("|");
    if (G === g && R === res && V === v && (N === "*" || N === ns) && (RN === "*" || RN === rn)) return true;
  }
  return false;
}

const RESOURCES = {
  "cronjobs.v1.cronledger.io": { group: "cronledger.io", resource: "cronjobs", crd: "cronjobs.cronledger.io" },
  "cronjobs.v1.batch": { group: "batch", resource: "cronjobs" },
};

// What `cronledger run` with these flags requests from the API server (docs/run.md, docs/kube.md):
// the exact permissions its ServiceAccount must have — and must not exceed.
export function requiredPermissions(run, podNamespace) {
  const need = new Set();
  const resource = RESOURCES[run.flags.get("resource") || "cronjobs.v1.cronledger.io"];
  if (!resource) return { error: `--resource=${run.flags.get("resource")} is not one cronledger manages` };
  const add = (g, r, verbs, ns = "*", name = "*") => verbs.forEach((v) => need.add(`${g}|${r}|${v}|${ns}|${name}`));
  if (run.switches.has("shadow")) {
    add(resource.group, resource.resource, ["get", "list", "watch"]);
    add("batch", "jobs", ["get", "list", "watch"]);
  } else if (run.flags.has("kafka-watch-topic")) {
    // The watch events come from Kafka (the relay lists and watches); the API is only acted on.
    add(resource.group, resource.resource, ["get"]);
    add(resource.group, `${resource.resource}/status`, ["update"]);
    add("batch", "jobs", ["get", "create", "delete"]);
    add("events.k8s.io", "events", ["create", "patch"]);
  } else {
    add(resource.group, resource.resource, ["get", "list", "watch"]);
    add(resource.group, `${resource.resource}/status`, ["update"]);
    add("batch", "jobs", ["get", "list", "watch", "create", "delete"]);
    add("events.k8s.io", "events", ["create", "patch"]);
  }
  if (run.switches.has("leader-elect")) {
    const ns = run.flags.get("leader-elect-namespace") || podNamespace;
    const id = run.flags.get("leader-elect-id") || "cronledger-controller";
    add("coordination.k8s.io", "leases", ["create"], ns);
    add("coordination.k8s.io", "leases", ["get", "update"], ns, id);
  }
  return { need, resource };
}

// Pod Security "restricted" (and a read-only root) for one container of a pod spec.
function restrictedProblems(pod, c) {
  const p = [];
  const psc = pod.securityContext || {};
  const csc = c.securityContext || {};
  if (!(psc.runAsNonRoot || csc.runAsNonRoot)) p.push("runAsNonRoot is not set");
  if ((csc.runAsUser ?? psc.runAsUser) === 0) p.push("runs as root");
  if ((csc.seccompProfile || psc.seccompProfile)?.type !== "RuntimeDefault") p.push("seccompProfile must be RuntimeDefault");
  if (csc.allowPrivilegeEscalation !== false) p.push("allowPrivilegeEscalation must be false");
  if (csc.readOnlyRootFilesystem !== true) p.push("readOnlyRootFilesystem must be true");
  if (!(csc.capabilities?.drop || []).includes("ALL")) p.push("capabilities must drop ALL");
  if ((csc.capabilities?.add || []).length) p.push("no capabilities may be added");
  return p;
}

// RBAC of one ServiceAccount: every needed permission granted, and nothing granted that no
// request needs at the same or a wider scope (a grant wider than the request — any namespace, any
// name — is excess).
function exactRbacProblems(objects, ns, sa, need, what) {
  const p = [];
  const { granted, problems } = grantedPermissions(objects, ns, sa);
  p.push(...problems);
  for (const n of need) {
    if (!covers(granted, n)) p.push(`RBAC: missing ${n.split("|").slice(0, 3).join(" ")} (namespace ${n.split("|")[3]}, name ${n.split("|")[4]})`);
  }
  for (const g of granted) {
    const [G, R, V, N, RN] = g.split("|");
    const needed = [...need].some((n) => {
      const [g2, r2, v2, n2, rn2] = n.split("|");
      return G === g2 && R === r2 && V === v2 && (N === n2 || n2 === "*") && (RN === rn2 || rn2 === "*");
    });
    if (!needed) p.push(`RBAC: ${V} ${G || "core"}/${R} (namespace ${N}, name ${RN}) is granted but ${what} never requests it`);
  }
  return p;
}

// The watch relays of a render (`cronledger relay` in a Deployment): their own ServiceAccount
// with exactly list + watch on the CronJobs and Jobs, Pod Security "restricted", and the same
// brokers, resource and topic as the controller replicas that consume what they publish.
export function relayProblems(objects, run) {
  const p = [];
  const relays = objects.filter((o) => o.kind === "Deployment").flatMap((d) =>
    (d.spec.template.spec.containers || []).filter((c) => (c.args || [])[0] === "relay").map((c) => ({ d, c })));
  const watchTopic = run?.flags.get("kafka-watch-topic");
  if (watchTopic && !relays.length) p.push(`--kafka-watch-topic=${watchTopic}: no \`cronledger relay\` Deployment in the render publishes it`);
  for (const { d, c } of relays) {
    const at = `Deployment ${d.metadata.name}`;
    const ns = d.metadata.namespace;
    const pod = d.spec.template.spec;
    const relay = parseArgs(expandedArgs(c, { namespace: ns, name: d.metadata.name }));
    const resource = RESOURCES[relay.flags.get("resource") || "cronjobs.v1.cronledger.io"];
    if (!resource) {
      p.push(`${at}: --resource=${relay.flags.get("resource")} is not one cronledger manages`);
      continue;
    }
    if (!relay.flags.get("kafka-brokers")) p.push(`${at}: --kafka-brokers is not set`);
    const published = `${relay.flags.get("kafka-topic-prefix") || "cronledger"}.watch`;
    if (run && watchTopic && watchTopic !== published) p.push(`${at} publishes ${published}, but the controller reads --kafka-watch-topic=${watchTopic}`);
    if (run && watchTopic && relay.flags.get("kafka-brokers") !== run.flags.get("kafka-brokers")) {
      p.push(`${at}: --kafka-brokers=${relay.flags.get("kafka-brokers")} differs from the controller's ${run.flags.get("kafka-brokers")}`);
    }
    if (run && watchTopic && (relay.flags.get("resource") || "cronjobs.v1.cronledger.io") !== (run.flags.get("resource") || "cronjobs.v1.cronledger.io")) {
      p.push(`${at}: --resource differs from the controller's`);
    }
    if (d.spec.replicas !== 1) p.push(`${at}: one relay publishes the topic (replicas: 1), not ${d.spec.replicas}`);
    const sa = pod.serviceAccountName || "default";
    if (!objects.some((o) => o.kind === "ServiceAccount" && o.metadata?.name === sa && o.metadata?.namespace === ns)) {
      p.push(`${at}: ServiceAccount ${ns}/${sa} is not in the render`);
    }
    p.push(...restrictedProblems(pod, c).map((x) => `${at}: ${x}`));
    const need = new Set();
    for (const [g, r] of [[resource.group, resource.resource], ["batch", "jobs"]]) {
      for (const v of ["list", "watch"]) need.add(`${g}|${r}|${v}|*|*`);
    }
    p.push(...exactRbacProblems(objects, ns, sa, need, "the relay").map((x) => `${at}: ${x}`));
  }
  return p;
}

// The audit stores of a render (`cronledger audit-store` in a Deployment): one writer (one
// replica, Recreate), its --data-dir on a PersistentVolumeClaim of the render, its metrics and
// probe ports and probes as the flags say, Pod Security "restricted", a ServiceAccount with no
// permission and no token, and the controller's brokers. Kafka mode (several replicas, one trail)
// must have one.
export function auditStoreProblems(objects, run) {
  const p = [];
  const stores = objects.filter((o) => o.kind === "Deployment").flatMap((d) =>
    (d.spec.template.spec.containers || []).filter((c) => (c.args || [])[0] === "audit-store").map((c) => ({ d, c })));
  if (run?.flags.get("kafka-watch-topic") && !stores.length) {
    p.push("Kafka mode: no `cronledger audit-store` Deployment collects the replicas' ledgers into one trail");
  }
  for (const { d, c } of stores) {
    const at = `Deployment ${d.metadata.name}`;
    const ns = d.metadata.namespace;
    const pod = d.spec.template.spec;
    const store = parseArgs(expandedArgs(c, { namespace: ns, name: d.metadata.name }));
    if (d.spec.replicas !== 1) p.push(`${at}: one audit store writes its volume (replicas: 1), not ${d.spec.replicas}`);
    if (d.spec.strategy?.type !== "Recreate") p.push(`${at}: a rollout must not run two writers (strategy Recreate)`);
    if (!store.flags.get("kafka-brokers")) p.push(`${at}: --kafka-brokers is not set`);
    else if (run?.flags.get("kafka-brokers") && store.flags.get("kafka-brokers") !== run.flags.get("kafka-brokers")) {
      p.push(`${at}: --kafka-brokers=${store.flags.get("kafka-brokers")} differs from the controller's ${run.flags.get("kafka-brokers")}`);
    }
    if ((store.flags.get("kafka-topic-prefix") || "cronledger") !== (run?.flags.get("kafka-topic-prefix") || "cronledger")) {
      p.push(`${at}: --kafka-topic-prefix differs from the controller's`);
    }
    const ports = new Map((c.ports || []).map((x) => [x.name, x.containerPort]));
    const portNumber = (ref) => (typeof ref === "number" ? ref : ports.get(ref));
    for (const [flag, portName] of [["metrics-bind-address", "metrics"], ["health-probe-bind-address", "probes"]]) {
      const want = portOf(store.flags.get(flag));
      if (want === null) p.push(`${at}: --${flag} is not set`);
      else if (ports.get(portName) !== want) p.push(`${at}: --${flag}=${store.flags.get(flag)} but container port "${portName}" is ${ports.get(portName)}`);
    }
    const probePort = portOf(store.flags.get("health-probe-bind-address"));
    for (const [probe, path] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]]) {
      const h = c[probe]?.httpGet;
      if (!h) p.push(`${at}: ${probe} is missing`);
      else if (h.path !== path || portNumber(h.port) !== probePort) p.push(`${at}: ${probe} must GET ${path} on the probe port`);
    }
    const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
    const mount = (c.volumeMounts || []).find((m) => m.mountPath === store.flags.get("data-dir"));
    const claim = volumes.get(mount?.name)?.persistentVolumeClaim?.claimName;
    if (!store.flags.get("data-dir")) p.push(`${at}: --data-dir is not set`);
    else if (!claim) p.push(`${at}: --data-dir=${store.flags.get("data-dir")} is not on a PersistentVolumeClaim`);
    else if (!objects.some((o) => o.kind === "PersistentVolumeClaim" && o.metadata?.name === claim && o.metadata?.namespace === ns)) {
      p.push(`${at}: PersistentVolumeClaim ${ns}/${claim} is not in the render`);
    }
    for (const svc of objects.filter((o) => o.kind === "Service" && o.metadata?.namespace === ns &&
                                           Object.entries(o.spec?.selector || {}).length &&
                                           Object.entries(o.spec.selector).every(([k, v]) => d.spec.template.metadata?.labels?.[k] === v))) {
      for (const sp of svc.spec.ports || []) {
        if (portNumber(sp.targetPort ?? sp.port) === undefined) p.push(`${at}: Service ${svc.metadata.name} port ${sp.name} targets ${sp.targetPort}, not a container port`);
      }
    }
    const sa = pod.serviceAccountName || "default";
    if (!objects.some((o) => o.kind === "ServiceAccount" && o.metadata?.name === sa && o.metadata?.namespace === ns)) {
      p.push(`${at}: ServiceAccount ${ns}/${sa} is not in the render`);
    }
    if (pod.automountServiceAccountToken !== false) p.push(`${at}: it never calls the API server: automountServiceAccountToken must be false`);
    p.push(...restrictedProblems(pod, c).map((x) => `${at}: ${x}`));
    p.push(...exactRbacProblems(objects, ns, sa, new Set(), "the audit store").map((x) => `${at}: ${x}`));
  }
  return p;
}

export function overlayProblems(objects) {
  const p = [];
  const find = (kind, name, ns) => objects.find((o) => o.kind === kind && o.metadata?.name === name && (ns === undefined || o.metadata?.namespace === ns));
  const sets = objects.filter((o) => o.kind === "StatefulSet");
  if (sets.length !== 1) return [`expected one StatefulSet, found ${sets.length}`];
  const sts = sets[0];
  const ns = sts.metadata.namespace;
  if (!find("Namespace", ns)) p.push(`namespace ${ns} is not in the render`);
  const pod = sts.spec.template.spec;
  const podLabels = sts.spec.template.metadata?.labels || {};
  const subset = (sel) => Object.entries(sel || {}).every(([k, v]) => podLabels[k] === v);
  if (!subset(sts.spec.selector.matchLabels)) p.push("StatefulSet selector does not match the pod template's labels");
  const sa = pod.serviceAccountName || "default";
  if (!find("ServiceAccount", sa, ns)) p.push(`ServiceAccount ${ns}/${sa} is not in the render`);
  const c = (pod.containers || []).find((x) => x.name === "cronledger");
  if (!c) return p.concat(["no container named cronledger"]);
  const ports = new Map((c.ports || []).map((x) => [x.name, x.containerPort]));
  const portNumber = (ref) => (typeof ref === "number" ? ref : ports.get(ref));

  // The governing Service: headless, selects these pods, exposes named container ports.
  const svc = find("Service", sts.spec.serviceName, ns);
  if (!svc) p.push(`serviceName ${sts.spec.serviceName} is not a Service in the render`);
  else {
    if (svc.spec.clusterIP !== "None") p.push(`Service ${svc.metadata.name} must be headless (clusterIP: None) to govern the StatefulSet`);
    if (!subset(svc.spec.selector) || !Object.keys(svc.spec.selector || {}).length) p.push(`Service ${svc.metadata.name} does not select the StatefulSet's pods`);
    for (const sp of svc.spec.ports || []) {
      if (portNumber(sp.targetPort ?? sp.port) === undefined) p.push(`Service port ${sp.name} targets ${sp.targetPort}, not a container port`);
    }
  }

  // Flags ↔ ports, probes, volumes.
  const run = parseArgs(expandedArgs(c, { namespace: ns, name: `${sts.metadata.name}-0` }));
  for (const a of run.flags.values()) if (/\$\(/.test(a)) p.push(`argument ${a} refers to a variable the container does not define`);
  if (run.command !== "run") p.push(`the container must run \`cronledger run\`, not ${run.command}`);
  const expectPort = (flag, portName) => {
    const want = portOf(run.flags.get(flag));
    if (want === null) p.push(`--${flag} is not set`);
    else if (ports.get(portName) !== want) p.push(`--${flag}=${run.flags.get(flag)} but container port "${portName}" is ${ports.get(portName)}`);
  };
  expectPort("metrics-bind-address", "metrics");
  expectPort("health-probe-bind-address", "probes");
  if (run.flags.has("listen")) expectPort("listen", "api");
  const probePort = portOf(run.flags.get("health-probe-bind-address"));
  for (const [probe, path] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"], ["startupProbe", "/healthz"]]) {
    const h = c[probe]?.httpGet;
    if (!h) {
      if (probe !== "startupProbe") p.push(`${probe} is missing`);
      continue;
    }
    if (h.path !== path) p.push(`${probe} must GET ${path}, not ${h.path}`);
    if (portNumber(h.port) !== probePort) p.push(`${probe} port ${h.port} is not the --health-probe-bind-address port ${probePort}`);
  }
  const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
  const claims = new Set((sts.spec.volumeClaimTemplates || []).map((t) => t.metadata.name));
  const mounts = c.volumeMounts || [];
  for (const m of mounts) {
    if (!volumes.has(m.name) && !claims.has(m.name)) p.push(`volumeMount ${m.name} has no volume or volumeClaimTemplate`);
  }
  const mountAt = (dir) => mounts.find((m) => m.mountPath === dir);
  const dataDir = run.flags.get("data-dir");
  if (!dataDir) p.push("--data-dir is not set (the default ./data is on the read-only root)");
  else if (!claims.has(mountAt(dataDir)?.name)) p.push(`--data-dir=${dataDir} is not a volumeClaimTemplate mount`);
  if (run.flags.has("listen")) {
    const tf = run.flags.get("token-file") || "";
    const m = mountAt(tf.slice(0, tf.lastIndexOf("/")));
    if (!m || !volumes.get(m.name)?.secret) p.push(`--token-file=${tf} is not in a mounted Secret`);
  }
  const tmp = (c.env || []).find((e) => e.name === "TMPDIR")?.value || "/tmp";
  if (!volumes.get(mountAt(tmp)?.name)?.emptyDir) p.push(`TMPDIR ${tmp} is not a writable emptyDir`);

  p.push(...restrictedProblems(pod, c));

  // RBAC: exactly what this mode requests.
  const req = requiredPermissions(run, ns);
  if (req.error) return p.concat([req.error]);
  if (run.switches.has("shadow") && run.flags.get("resource") !== "cronjobs.v1.batch") {
    p.push("--shadow audits built-in CronJobs: it needs --resource=cronjobs.v1.batch");
  }
  if (req.resource.crd && !find("CustomResourceDefinition", req.resource.crd)) {
    p.push(`--resource=${run.flags.get("resource") || "cronjobs.v1.cronledger.io"} needs the CRD ${req.resource.crd} in the render`);
  }
  p.push(...exactRbacProblems(objects, ns, sa, req.need, "this mode"));
  p.push(...relayProblems(objects, run));
  p.push(...auditStoreProblems(objects, run));
  return p;
}
