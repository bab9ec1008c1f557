// `cronledger emit`: runs the Kafka outbox over a store (docs/kafka.md). Drains what is committed
// to P.decisions (and/or P.ledger) and exits, or keeps tailing with --follow.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "emit/kafka_config.h"
#include "emit/outbox_emitter.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger emit --kafka-brokers HOST:PORT[,...] [--data-dir DIR]\n"
    "         [--kafka-topic-prefix P] [--kafka-config FILE] [--stream decisions|ledger|all]\n"
    "         [--kafka-source-id ID] [--follow] [--timeout DUR] [--verbose]\n"
    "         [-o table|json|yaml|csv]\n"
    "Produces the committed decision log to P.decisions (and/or the input log to P.ledger) from\n"
    "the stored emission position; the position advances only over acknowledged records.\n"
    "Without --follow it exits once everything committed at start is acknowledged (or after\n"
    "--timeout, default 5m, with exit 1); with --follow it runs until SIGINT/SIGTERM.\n"
    "--kafka-source-id: the cronledger-source header of every record (default: none), as\n"
    "`cronledger run --kafka-source-id` sets it; emit and run continue the same stream.\n";

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

struct Options {
  store::LedgerOptions ledger;
  emit::KafkaConfig kafka;
  std::string source_id;  // --kafka-source-id; empty: no cronledger-source header
  std::vector<emit::EmitStream> streams;
  bool follow = false;
  bool verbose = false;
  Duration timeout = std::chrono::minutes(5);
  OutputFormat format = OutputFormat::kTable;
};

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  Flags flags;
  flags.Value("data-dir").Value("kafka-brokers").Value("kafka-topic-prefix").Value("kafka-config");
  flags.Value("kafka-source-id")
      .Value("stream")
      .Value("timeout")
      .Value("output", "o")
      .Switch("follow")
      .Switch("verbose");
  CL_RETURN_IF_ERROR(flags.Parse(args));
  Options o;
  o.ledger.path = flags.GetOr("data-dir", "./data");
  o.ledger.create_if_missing = false;
  if (!flags.Has("kafka-brokers")) return Status::InvalidArgument("--kafka-brokers is required");
  o.kafka.brokers = *flags.Get("kafka-brokers");
  o.kafka.topic_prefix = flags.GetOr("kafka-topic-prefix", o.kafka.topic_prefix);
  if (flags.Has("kafka-config")) {
    CL_ASSIGN_OR_RETURN(o.kafka.properties,
                        emit::LoadKafkaPropertiesFile(*flags.Get("kafka-config")));
  }
  o.source_id = flags.GetOr("kafka-source-id", "");
  if (flags.Has("kafka-source-id") && o.source_id.empty()) {
    return Status::InvalidArgument("--kafka-source-id: empty id");
  }
  const std::string stream = flags.GetOr("stream", "decisions");
  if (stream == "decisions" || stream == "all") o.streams.push_back(emit::EmitStream::kDecisions);
  if (stream == "ledger" || stream == "all") o.streams.push_back(emit::EmitStream::kLedger);
  if (o.streams.empty()) return Status::InvalidArgument("--stream: decisions, ledger or all");
  if (flags.Has("timeout")) {
    CL_ASSIGN_OR_RETURN(o.timeout, ParseGoDuration(*flags.Get("timeout")));
  }
  CL_ASSIGN_OR_RETURN(o.format, ParseOutputFormat(flags.GetOr("output", "table")));
  o.follow = flags.Has("follow");
  o.verbose = flags.Has("verbose");
  return o;
}

struct Lane {
  emit::OutboxEmitterOptions options;
  std::unique_ptr<emit::OutboxEmitter> emitter;
  uint64_t target = 0;  // drain mode: the head at start
  emit::EmitProgress last;
  std::chrono::steady_clock::time_point retry_at;
};

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  auto parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger emit: %s\n%s", parsed.status().message().c_str(), kUsage);
    return kExitUsage;
  }
  const Options& o = *parsed;
  if (o.verbose) {
    for (const auto& [key, value] : emit::RedactedProperties(o.kafka.properties)) {
      std::fprintf(io.err, "kafka property %s=%s\n", key.c_str(), value.c_str());
    }
  }
  auto ledger = store::Ledger::Open(o.ledger);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger emit: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  std::vector<Lane> lanes;
  for (emit::EmitStream s : o.streams) {
    Lane lane;
    lane.options = emit::OutboxOptionsFor(o.kafka, s, o.source_id);
    lanes.push_back(std::move(lane));
  }
  g_stop.store(false);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  int exit_code = kExitOk;
  while (!g_stop.load()) {
    bool all_done = true;
    bool any_running = false;
    for (Lane& lane : lanes) {
      const auto now = std::chrono::steady_clock::now();
      if (!lane.emitter && now >= lane.retry_at) {
        auto opened = emit::OutboxEmitter::Open(**ledger, lane.options);
        if (!opened.ok() && opened.status().IsInvalidArgument()) {
          std::fprintf(io.err, "cronledger emit: %s\n", opened.status().ToString().c_str());
          g_stop.store(true);
          exit_code = kExitUsage;
          break;
        }
        if (opened.ok()) {
          lane.emitter = std::move(opened).value();
          auto head = lane.emitter->Head();
          if (lane.target == 0 && head.ok()) lane.target = *head;
        }
      }
      if (!lane.emitter) {
        all_done = false;
        continue;
      }
      any_running = true;
      auto p = lane.emitter->Step(std::chrono::milliseconds(100));
      if (!p.ok()) {
        // The session is over; a new one resumes at the stored position after a back-off.
        std::fprintf(io.err, "cronledger emit: %s: %s (retrying)\n", lane.options.topic.c_str(),
                     p.status().ToString().c_str());
        lane.emitter.reset();
        lane.retry_at = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        all_done = false;
        continue;
      }
      lane.last = *p;
      if (p->position < lane.target || p->in_flight > 0) all_done = false;
    }
    if (!o.follow && all_done) break;
    if (!o.follow && std::chrono::steady_clock::now() > deadline) {
      std::fprintf(io.err, "cronledger emit: not caught up within the timeout\n");
      exit_code = kExitFailure;
      break;
    }
    // Every lane is waiting out its back-off: nothing to poll, so wait for the retry.
    if (!any_running && !g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  std::vector<model::Json> items;
  for (const Lane& lane : lanes) {
    items.push_back({{"topic", lane.options.topic},
                     {"position", lane.last.position},
                     {"produced", lane.last.produced},
                     {"acknowledged", lane.last.acknowledged}});
  }
  PrintItems(io.out, o.format, {"topic", "position", "produced", "acknowledged"}, items);
  return exit_code;
}

}  // namespace

CL_REGISTER_COMMAND("emit", "produce the committed decision/input log to Kafka (outbox)", Run,
                    kUsage);

}  // namespace cronledger::app
