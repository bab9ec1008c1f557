#!/usr/bin/env node
// deploy/Dockerfile without docker (none runs here; no Dockerfile linter is packaged for Debian
// 12 or reachable): what can be checked for real on this Debian 12 machine.
//   * structure: a Debian 12 build stage that runs scripts/install-deps.sh, a Debian 12 runtime
//     stage that runs as the StatefulSet's non-root uid;
//   * the runtime stage installs tzdata unpinned after an apt-get update in the same RUN (the
//     newest tz rules of the base image's sources at build time);
//   * every package the runtime stage installs exists in Debian 12 (apt-cache policy: a bookworm
//     candidate);
//   * with --cronledger BIN: every shared library the binary needs (readelf NEEDED → ldconfig →
//     dpkg -S) comes from a package the runtime stage installs, one of their dependencies, or the
//     base image (Priority: required); and every lib* package installed provides one of them.
// Exit 77 (ctest: skipped) only when apt has no package lists to ask.
// Usage: node tests/deploy/image_packages.mjs --root REPO [--cronledger BIN]
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseYamlDocuments } from "./lib/kustomize.mjs";
import { check, finish } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const root = path.resolve(opt("--root", path.join(here, "../..")));
const bin = opt("--cronledger");

const sh = (cmd, args) => spawnSync(cmd, args, { encoding: "utf8", timeout: 60000 });

// ---- parse the Dockerfile: instructions (continuations joined, comments dropped) per stage ----
export function parseDockerfile(text) {
  const lines = text.split("\n");
  const instructions = [];
  let cur = "";
  for (const raw of lines) {
    const line = raw.replace(/\r$/, "");
    if (!cur && /^\s*#/.test(line)) continue;
    if (cur && /^\s*#/.test(line)) continue; // comment lines inside a continuation
    if (/\\\s*$/.test(line)) {
      cur += line.replace(/\\\s*$/, " ");
      continue;
    }
    cur += line;
    if (cur.trim()) instructions.push(cur.trim());
    cur = "";
  }
  const stages = [];
  for (const ins of instructions) {
    const [op, ...rest] = ins.split(/\s+/);
    const args = rest.join(" ");
    if (op.toUpperCase() === "FROM") stages.push({ from: args, instructions: [] });
    else if (stages.length) stages[stages.length - 1].instructions.push({ op: op.toUpperCase(), args });
  }
  return stages;
}

// Package names given to `apt-get install` in a RUN (options and shell operators skipped).
export function aptInstallPackages(run) {
  const pkgs = [];
  for (const cmd of run.split(/&&|;|\|\|/)) {
    const words = cmd.trim().split(/\s+/);
    const i = words.findIndex((w, n) => w === "install" && words.slice(0, n).some((x) => /^apt(-get)?$/.test(x)));
    if (i < 0) continue;
    for (const w of words.slice(i + 1)) if (!w.startsWith("-") && w) pkgs.push(w.replace(/=.*$/, ""));
  }
  return pkgs;
}

const dockerfile = path.join(root, "deploy/Dockerfile");
const stages = parseDockerfile(fs.readFileSync(dockerfile, "utf8"));
const structure = [];
if (stages.length < 2) structure.push(`a multi-stage build needs two stages, found ${stages.length}`);
for (const s of stages) {
  if (!/^debian:(12|bookworm)([-.][a-z0-9.-]+)?(@sha256:[0-9a-f]{64})?(\s+AS\s+\S+)?$/i.test(s.from)) structure.push(`FROM ${s.from}: not a Debian 12 image`);
}
const build = stages[0];
const runtime = stages[stages.length - 1];
if (build && !build.instructions.some((i) => i.op === "RUN" && /scripts\/install-deps\.sh/.test(i.args))) {
  structure.push("the build stage does not install its dependencies with scripts/install-deps.sh");
}
// scripts/build-release.sh is the Release build CI runs too (scripts/test.sh --release); a RUN of it
// counts when the script configures Release.
const releaseScript = fs.readFileSync(path.join(root, "scripts/build-release.sh"), "utf8");
const configuresRelease = (args) => /CMAKE_BUILD_TYPE=Release/.test(args) ||
  (/scripts\/build-release\.sh/.test(args) && /CMAKE_BUILD_TYPE=Release/.test(releaseScript));
if (build && !build.instructions.some((i) => i.op === "RUN" && configuresRelease(i.args))) {
  structure.push("the build stage does not configure a Release build");
}
const user = runtime?.instructions.filter((i) => i.op === "USER").pop()?.args;
const sts = parseYamlDocuments(fs.readFileSync(path.join(root, "deploy/kubernetes/base/statefulset.yaml"), "utf8"), "statefulset.yaml")
  .find((o) => o.kind === "StatefulSet");
const uid = String(sts.spec.template.spec.securityContext.runAsUser);
if (!user) structure.push("the runtime stage sets no USER (it would run as root)");
else if (user.split(":")[0] !== uid) structure.push(`USER ${user}: the StatefulSet runs as uid ${uid}; use the numeric uid (runAsNonRoot needs it)`);
if (runtime?.instructions.some((i) => i.op === "RUN" && /scripts\/install-deps\.sh|-dev\b/.test(i.args))) {
  structure.push("the runtime stage installs build dependencies");
}
const entry = runtime?.instructions.find((i) => i.op === "ENTRYPOINT")?.args || "";
if (!/cronledger/.test(entry)) structure.push("the runtime stage's ENTRYPOINT is not cronledger");
check("deploy/Dockerfile: structure (Debian 12 stages, install-deps.sh, Release, non-root USER)", structure);

const runtimePackages = (runtime?.instructions || []).filter((i) => i.op === "RUN").flatMap((i) => aptInstallPackages(i.args));
check("deploy/Dockerfile: the runtime stage installs packages", runtimePackages.length ? [] : ["no apt-get install in the runtime stage"]);
// Current time zone rules: tzdata (CronJob timeZone; debian:12-slim has no zoneinfo) installed
// unpinned, in the same RUN as an apt-get update, so a build takes the newest tzdata of the base
// image's sources (stable updates and security included) rather than a cached or pinned one.
const tz = [];
const tzRun = (runtime?.instructions || []).find((i) => i.op === "RUN" && aptInstallPackages(i.args).includes("tzdata"));
if (!tzRun) tz.push("the runtime stage does not install tzdata");
else {
  if (/\btzdata=/.test(tzRun.args)) tz.push("tzdata is pinned to a version: it would not follow new tz releases");
  const update = tzRun.args.search(/apt(-get)?\s+update/);
  if (update < 0 || update > tzRun.args.search(/apt(-get)?\s+install/)) {
    tz.push("tzdata is installed without an apt-get update before it in the same RUN (stale lists)");
  }
}
check("deploy/Dockerfile: the runtime stage installs the current tzdata (unpinned, fresh lists)", tz);

// ---- apt ----
const lists = "/var/lib/apt/lists";
const haveLists = fs.existsSync(lists) && fs.readdirSync(lists).some((f) => f.includes("_Packages"));
if (!haveLists) {
  console.log("# apt has no package lists (run apt-get update): skipped");
  process.exit(77);
}
// One apt-cache call for all packages (each call loads apt's whole cache: about a second).
const missing = [];
const policy = new Map();
for (const section of (sh("apt-cache", ["policy", ...runtimePackages]).stdout || "").split(/^(?=\S+:$)/m)) {
  const name = /^(\S+):$/m.exec(section)?.[1];
  if (name) policy.set(name, section);
}
for (const p of runtimePackages) {
  const section = policy.get(p) || "";
  const candidate = /Candidate:\s*(\S+)/.exec(section)?.[1];
  if (!candidate || candidate === "(none)") missing.push(`${p}: no candidate in apt's lists`);
  else if (!/bookworm|\/var\/lib\/dpkg\/status/.test(section)) missing.push(`${p}: not from Debian 12 (bookworm)`);
}
check(`deploy/Dockerfile: runtime packages exist in Debian 12 (${runtimePackages.join(" ")})`, missing);

if (bin) {
  const problems = [];
  const elf = sh("readelf", ["-d", bin]);
  if (elf.status !== 0) problems.push(`readelf -d ${bin}: ${elf.stderr || elf.error?.message}`);
  const needed = [...(elf.stdout || "").matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  // Sanitizer runtimes appear only in the -DCRONLEDGER_SANITIZE build, never in the image's.
  const sonames = needed.filter((s) => !/^lib(a|ub|t|l)san\.so/.test(s));
  const ldcache = sh("ldconfig", ["-p"]).stdout || "";
  const owner = new Map();
  const paths = new Map(); // soname → candidate paths (merged /usr: dpkg may know either spelling)
  for (const so of sonames) {
    const m = new RegExp(`^\\s*${so.replace(/[.+]/g, "\\$&")} \\(([^)]*)\\) => (\\S+)`, "m").exec(ldcache);
    if (!m) {
      problems.push(`${so}: not in the linker cache`);
      continue;
    }
    const real = fs.realpathSync(m[2]);
    paths.set(so, [...new Set([m[2], real].flatMap((x) => [x, x.replace(/^\/usr\/lib\//, "/lib/"), x.replace(/^\/lib\//, "/usr/lib/")]))]);
  }
  const byPath = new Map();
  for (const line of (sh("dpkg", ["-S", ...[...paths.values()].flat()]).stdout || "").split("\n")) {
    const m = /^([^:]+(?::[a-z0-9]+)?): (\/.*)$/.exec(line);
    if (m) byPath.set(m[2], m[1].split(":")[0]);
  }
  for (const [so, candidates] of paths) {
    const pkg = candidates.map((c) => byPath.get(c)).find(Boolean);
    if (!pkg) problems.push(`${so} (${candidates[0]}): no package owns it`);
    else owner.set(so, pkg);
  }
  // What the runtime image has: the listed packages, their dependencies, the base's required set.
  const deps = sh("apt-cache", ["depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
    "--no-breaks", "--no-replaces", "--no-enhances", ...runtimePackages]);
  const out = deps.stdout || "";
  const closure = new Set([
    ...[...out.matchAll(/^([a-z0-9][a-z0-9+.-]+)$/gm)].map((m) => m[1]),
    ...[...out.matchAll(/^\s*\|?(?:Pre)?Depends:\s*<?([a-z0-9][a-z0-9+.-]+)>?\s*$/gm)].map((m) => m[1]),
  ]);
  for (const p of runtimePackages) closure.add(p);
  const outside = [...new Set([...owner.values()].filter((p) => !closure.has(p)))];
  const priority = new Map();
  if (outside.length) {
    for (const stanza of (sh("apt-cache", ["show", "--no-all-versions", ...outside]).stdout || "").split(/\n\n+/)) {
      const name = /^Package:\s*(\S+)/m.exec(stanza)?.[1];
      if (name) priority.set(name, /^Priority:\s*(\S+)/m.exec(stanza)?.[1]);
    }
  }
  for (const [so, pkg] of owner) {
    // Priority: required is in every Debian image, debian:12-slim included.
    if (!closure.has(pkg) && priority.get(pkg) !== "required") {
      problems.push(`${so} comes from ${pkg}, which the runtime stage does not install (nor anything it depends on)`);
    }
  }
  const providers = new Set(owner.values());
  for (const p of runtimePackages) {
    if (/^lib/.test(p) && !providers.has(p)) problems.push(`${p} is installed but provides none of the libraries cronledger links`);
  }
  check(`deploy/Dockerfile: the runtime stage provides every library cronledger links (${sonames.length} NEEDED)`, problems);
}

finish();
