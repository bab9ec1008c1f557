#!/usr/bin/env node
// The StatefulSet's arguments of every overlay, given to the real `cronledger run`: they must get
// past flag parsing and the run configuration's own checks (e.g. --shadow needs the batch/v1
// resource) and stop only at the kubeconfig, which we point at a file that does not exist — so
// nothing connects anywhere and no ledger is opened. Paths (--data-dir, --token-file) are moved
// into a temporary directory. Self-check: the same arguments plus an unknown flag must be refused
// at parsing, so the test can tell the two outcomes apart.
// Usage: node tests/deploy/run_flags.mjs --root REPO --cronledger BIN
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { render } from "./lib/kustomize.mjs";
import { expandedArgs } from "./lib/checks.mjs";
import { check, finish } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const root = path.resolve(opt("--root", path.join(here, "../..")));
const bin = opt("--cronledger") && path.resolve(opt("--cronledger"));
if (!bin || !fs.existsSync(bin)) {
  console.error(`run_flags.mjs: --cronledger BIN is required (got ${bin})`);
  process.exit(1);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cronledger-deploy-flags-"));
const kubeconfig = path.join(tmp, "no-such-kubeconfig");

function runCli(args) {
  const r = spawnSync(bin, args, { encoding: "utf8", timeout: 30000, cwd: tmp, env: { PATH: process.env.PATH, HOME: tmp } });
  return { code: r.status, err: `${r.stderr || ""}${r.error ? r.error.message : ""}` };
}

const overlaysDir = path.join(root, "deploy/kubernetes/overlays");
const overlays = fs.readdirSync(overlaysDir).filter((d) => fs.statSync(path.join(overlaysDir, d)).isDirectory()).sort();
check("overlays found", overlays.length >= 2 ? [] : [`only ${overlays.length} overlays under ${overlaysDir}`]);
for (const name of overlays) {
  const sts = render(path.join(overlaysDir, name)).find((o) => o.kind === "StatefulSet");
  const container = sts?.spec.template.spec.containers.find((c) => c.name === "cronledger");
  if (!container) {
    check(`${name}: has the cronledger container`, ["no StatefulSet container named cronledger"]);
    continue;
  }
  const args = expandedArgs(container, { namespace: sts.metadata.namespace, name: `${sts.metadata.name}-0` }).map((a) => {
    const m = /^--(data-dir|token-file)=(.*)$/.exec(a);
    return m ? `--${m[1]}=${path.join(tmp, name, m[2])}` : a;
  });
  const accepted = runCli([...args, `--kubeconfig=${kubeconfig}`]);
  const problems = [];
  if (!/kubeconfig:/.test(accepted.err)) {
    problems.push(`\`cronledger ${container.args.join(" ")}\` did not reach the kubeconfig step (exit ${accepted.code}): ${accepted.err.trim().split("\n")[0]}`);
  }
  if (fs.existsSync(path.join(tmp, name))) problems.push("a data directory was created before the kubeconfig was read");
  check(`${name}: cronledger accepts the StatefulSet's arguments (${container.args.slice(1).join(" ")})`, problems);

  const refused = runCli([...args, "--no-such-flag", `--kubeconfig=${kubeconfig}`]);
  check(`${name}: self-check: an unknown flag is refused before the kubeconfig step`,
    refused.code === 2 && !/kubeconfig:/.test(refused.err) && /no-such-flag/.test(refused.err)
      ? [] : [`exit ${refused.code}: ${refused.err.trim().split("\n")[0]}`]);
}
// The watch relays (`cronledger relay` in a Deployment) the same way.
for (const name of overlays) {
  for (const d of render(path.join(overlaysDir, name)).filter((o) => o.kind === "Deployment")) {
    for (const c of d.spec.template.spec.containers.filter((x) => (x.args || [])[0] === "relay")) {
      const args = expandedArgs(c, { namespace: d.metadata.namespace, name: d.metadata.name });
      const accepted = runCli([...args, `--kubeconfig=${kubeconfig}`]);
      check(`${name}: cronledger accepts the relay's arguments (${c.args.slice(1).join(" ")})`,
        /kubeconfig:/.test(accepted.err) ? [] : [`exit ${accepted.code}: ${accepted.err.trim().split("\n")[0]}`]);
      const refused = runCli([...args, "--no-such-flag", `--kubeconfig=${kubeconfig}`]);
      check(`${name}: self-check: an unknown relay flag is refused before the kubeconfig step`,
        refused.code === 2 && !/kubeconfig:/.test(refused.err) && /no-such-flag/.test(refused.err)
          ? [] : [`exit ${refused.code}: ${refused.err.trim().split("\n")[0]}`]);
    }
  }
}
// The audit stores (`cronledger audit-store` in a Deployment): their arguments get past every
// check before the Kafka properties file, which we point at a file that does not exist — so
// nothing connects and no store is created.
const noConfig = path.join(tmp, "no-such-kafka-config");
for (const name of overlays) {
  for (const d of render(path.join(overlaysDir, name)).filter((o) => o.kind === "Deployment")) {
    for (const c of d.spec.template.spec.containers.filter((x) => (x.args || [])[0] === "audit-store")) {
      const args = expandedArgs(c, { namespace: d.metadata.namespace, name: d.metadata.name }).map((a) => {
        const m = /^--data-dir=(.*)$/.exec(a);
        return m ? `--data-dir=${path.join(tmp, name, m[1])}` : a;
      });
      const accepted = runCli([...args, `--kafka-config=${noConfig}`]);
      const problems = /--kafka-config: /.test(accepted.err) ? [] : [`exit ${accepted.code}: ${accepted.err.trim().split("\n")[0]}`];
      if (fs.existsSync(path.join(tmp, name))) problems.push("a data directory was created before the Kafka properties were read");
      check(`${name}: cronledger accepts the audit store's arguments (${c.args.slice(1).join(" ")})`, problems);
      const refused = runCli([...args, "--no-such-flag", `--kafka-config=${noConfig}`]);
      check(`${name}: self-check: an unknown audit-store flag is refused before the Kafka properties`,
        refused.code === 2 && !/--kafka-config: /.test(refused.err) && /no-such-flag/.test(refused.err)
          ? [] : [`exit ${refused.code}: ${refused.err.trim().split("\n")[0]}`]);
    }
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
finish();
