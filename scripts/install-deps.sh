#!/usr/bin/env bash
# Installs the Debian packages cronledger needs to build, test and run. Idempotent: packages already
# present are not reinstalled, and `apt-get update` runs only when the package lists are older
# than a day (or absent) and something is missing or tzdata is checked for an update (below).
#
# Usage: scripts/install-deps.sh [--test|--dev]
#   (none)  what building and running cronledger needs
#   --test  plus what the test suite needs (headless Chromium for the timeline page, kcat, Python 3
#           and PyYAML for the docs checks in tests/docs, Node.js
#           and tests/deploy's npm packages, clang-14 and libFuzzer for the fuzz smoke run)
#   --dev   plus the benchmark-peer tools (Go + robfig/cron)
set -euo pipefail

runtime_and_build=(
  build-essential cmake ninja-build ccache pkg-config git
  librocksdb-dev librdkafka-dev libpoco-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsimdjson-dev
  tzdata zlib1g-dev liblz4-dev libzstd-dev libsnappy-dev libbz2-dev libjemalloc-dev
  clang-format libyaml-cpp-dev
)
# kcat, the JDK and Maven (the Kafka broker), jq and curl: the end-to-end tier (tests/e2e). Its
# Kubernetes peers also need Go >= 1.24, which Debian 12 does not package (the machine provides it).
# python3 and python3-yaml: the documentation checks (tests/docs).
# clang-14 and libclang-rt-14-dev (libFuzzer, ASan/UBSan runtimes): the fuzz targets (fuzz/), whose
# smoke run is part of scripts/test.sh --all.
test_extra=(kcat chromium openjdk-17-jdk-headless maven jq curl python3 python3-yaml
            clang-14 libclang-rt-14-dev)
dev_extra=(golang-go golang-github-robfig-cron-dev)

# The deploy tests (tests/deploy) run on Node.js: Debian's nodejs/npm where the machine has none.
if ! command -v node >/dev/null 2>&1; then test_extra+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then test_extra+=(npm); fi

want=("${runtime_and_build[@]}")
case "${1:-}" in
  "") ;;
  --test) want+=("${test_extra[@]}") ;;
  --dev) want+=("${test_extra[@]}" "${dev_extra[@]}") ;;
  *) echo "usage: $0 [--test|--dev]" >&2; exit 2 ;;
esac

# tests/deploy's npm dependencies (pinned by its package-lock.json), for --test and --dev:
# `npm ci` again only when the lock file changed since the last install.
npm_deploy_tests() {
  [[ -n "${1:-}" ]] || return 0
  local dir stamp sum
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/deploy"
  [[ -f "$dir/package-lock.json" ]] || return 0
  stamp="$dir/node_modules/.install-deps.sha256"
  sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$sum" ]]; then
    echo "install-deps: npm ci in tests/deploy" >&2
    npm ci --prefix "$dir" --no-audit --no-fund --prefer-offline --loglevel=error >&2
    echo "$sum" >"$stamp"
  fi
}

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
refresh_lists() {  # apt-get update when the package lists are older than a day (or absent)
  local lists=/var/lib/apt/lists
  if [[ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]]; then
    $SUDO apt-get update -q
  fi
}

# tzdata decides the fire times of CronJobs with a timeZone (docs/schedule.md, "Which tz
# database"), and Debian ships tz rule changes as tzdata updates, usually through the
# bookworm-security and bookworm-updates suites: installed is not enough, it must be the newest
# release the configured sources offer. Local checks only (dpkg-query, apt-cache) unless the lists
# are a day old; apt-get runs only when there is an upgrade.
tzdata_current() {
  if [[ -n "$SUDO" ]] && ! sudo -n true 2>/dev/null; then
    echo "install-deps: not root and no password-less sudo: tzdata not checked for updates" >&2
    return 0
  fi
  refresh_lists
  local installed candidate
  installed="$(dpkg-query -W -f='${Version}' tzdata 2>/dev/null || true)"
  candidate="$(apt-cache policy tzdata | awk '$1 == "Candidate:" {print $2}')"
  if ! grep -rqs -- '-security' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-deps: no Debian security suite (e.g. bookworm-security) in the apt sources:" \
      "tzdata updates published there will be missed" >&2
  fi
  if [[ -n "$installed" && -n "$candidate" && "$candidate" != "(none)" ]] &&
    dpkg --compare-versions "$candidate" gt "$installed"; then
    echo "install-deps: upgrading tzdata $installed -> $candidate" >&2
    $SUDO apt-get install -y -q --no-install-recommends --only-upgrade tzdata
  fi
}

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  refresh_lists
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
tzdata_current
npm_deploy_tests "${1:-}"
