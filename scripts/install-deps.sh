#!/usr/bin/env bash
# Installs the Debian packages cronledger needs to build, test and run. Idempotent: packages already
# present are not reinstalled, and `apt-get update` runs only when something is missing and the
# package lists are older than a day (or absent).
#
# Usage: scripts/install-deps.sh [--test|--dev]
#   (none)  what building and running cronledger needs
#   --test  plus what the test suite needs (headless Chromium for the timeline page, kcat)
#   --dev   plus the fuzzing and benchmark-peer tools (clang-14/libFuzzer, Go + robfig/cron)
set -euo pipefail

runtime_and_build=(
  build-essential cmake ninja-build ccache pkg-config git
  librocksdb-dev librdkafka-dev libpoco-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsimdjson-dev
  tzdata zlib1g-dev liblz4-dev libzstd-dev libsnappy-dev libbz2-dev
  clang-format libyaml-cpp-dev
)
test_extra=(kcat chromium)
dev_extra=(
  clang-14 libclang-rt-14-dev
  golang-go golang-github-robfig-cron-dev
)

want=("${runtime_and_build[@]}")
case "${1:-}" in
  "") ;;
  --test) want+=("${test_extra[@]}") ;;
  --dev) want+=("${test_extra[@]}" "${dev_extra[@]}") ;;
  *) echo "usage: $0 [--test|--dev]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
lists=/var/lib/apt/lists
if [[ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]]; then
  $SUDO apt-get update -q
fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
