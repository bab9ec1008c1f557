#!/usr/bin/env bash
# Prints the outbox emission rate (decisions/s) next to a raw librdkafka idempotent producer of the
# same payloads, and the watch-topic ingest rate (events/s into the ledger) next to a raw consumer
# of the same topic, all against one librdkafka mock cluster in the same run, with their ratios.
#   BUILD_DIR=<Release build dir> bench/kafka/run.sh [DECISIONS] [EVENTS] [PARTITIONS]
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
exec "$BUILD_DIR/bench/kafka/kafka_bench" "${1:-60000}" "${2:-40000}" "${3:-16}"
