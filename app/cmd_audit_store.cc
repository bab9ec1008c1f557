// `cronledger audit-store`: keeps the audit store of a deployment from the outbox's streams
// (app/support_audit_store.h, docs/kafka.md "Audit store").
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "emit/kafka_config.h"
#include "kube/manager_server.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger audit-store --kafka-brokers HOST:PORT[,...] --data-dir DIR\n"
    "         [--kafka-topic-prefix P] [--kafka-config FILE] [--until-caught-up]\n"
    "         [--poll-interval DUR] [--metrics-bind-address [HOST]:PORT|0]\n"
    "         [--health-probe-bind-address [HOST]:PORT|0] [-o table|json|yaml|csv]\n"
    "Consumes P.ledger and P.decisions (every partition, every cronledger-source) into one\n"
    "audit store: DIR/sources/<source>/ holds a copy of each source's ledger, with the same\n"
    "seqs and bytes, for every read command (--data-dir DIR/sources/<source>). Each record is\n"
    "stored once; a record whose predecessor has not arrived waits for it.\n"
    "Without --until-caught-up it keeps following the topics (a round every --poll-interval,\n"
    "default 1s) until SIGINT/SIGTERM. With --until-caught-up it reads to the ends the topics\n"
    "have when it starts, prints each source's state, and exits 0, or 1 when a source waits\n"
    "for records the topics do not hold (named on stderr).\n"
    "Following, --metrics-bind-address serves /metrics and --health-probe-bind-address\n"
    "/healthz and /readyz (ready while the last round succeeded); both default to 0 (off).\n";

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

void PrintStates(const CommandIo& io, OutputFormat format, const audit_store::RoundReport& report) {
  std::vector<model::Json> items;
  for (const auto& s : report.sources) {
    items.push_back(
        {{"source", s.source},
         {"dir", s.dir},
         {"lastInputSeq", s.last_input_seq},
         {"lastDecisionSeq", s.last_decision_seq},
         {"lastRecordedAt", s.last_recorded_at ? model::Json(FormatRfc3339Nano(*s.last_recorded_at))
                                               : model::Json(nullptr)},
         {"waitingInputs", s.waiting_inputs},
         {"waitingDecisions", s.waiting_decisions}});
  }
  PrintItems(io.out, format,
             {"source", "dir", "lastInputSeq", "lastDecisionSeq", "lastRecordedAt", "waitingInputs",
              "waitingDecisions"},
             items);
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("kafka-brokers").Value("kafka-topic-prefix").Value("kafka-config").Value("data-dir");
  flags.Value("poll-interval").Value("output", "o").Switch("until-caught-up");
  flags.Value("metrics-bind-address").Value("health-probe-bind-address");
  Status bad = flags.Parse(args);
  audit_store::AuditStoreOptions options;
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (bad.ok() && !format.ok()) bad = format.status();
  if (bad.ok() && !flags.Has("kafka-brokers")) {
    bad = Status::InvalidArgument("--kafka-brokers is required");
  }
  if (bad.ok() && !flags.Has("data-dir")) bad = Status::InvalidArgument("--data-dir is required");
  Duration interval = std::chrono::seconds(1);
  if (bad.ok() && flags.Has("poll-interval")) {
    auto d = ParseGoDuration(*flags.Get("poll-interval"));
    if (!d.ok() || *d <= Duration::zero()) {
      bad = Status::InvalidArgument("--poll-interval: a positive duration such as 1s");
    } else {
      interval = *d;
    }
  }
  if (bad.ok()) {
    options.brokers = *flags.Get("kafka-brokers");
    options.data_dir = *flags.Get("data-dir");
    options.topic_prefix = flags.GetOr("kafka-topic-prefix", options.topic_prefix);
  }
  std::optional<std::string> metrics_address, probe_address;
  for (auto [flag, out] : {std::pair{"metrics-bind-address", &metrics_address},
                           std::pair{"health-probe-bind-address", &probe_address}}) {
    if (!bad.ok()) break;
    auto address = kube::ParseBindAddress(flags.GetOr(flag, "0"));
    if (address.ok()) {
      *out = *address;
    } else {
      bad = Status::InvalidArgument(std::string("--") + flag + ": " + address.status().message());
    }
  }
  // Last: a properties file that cannot be read is reported after every other flag was checked.
  if (bad.ok() && flags.Has("kafka-config")) {
    auto props = emit::LoadKafkaPropertiesFile(*flags.Get("kafka-config"));
    if (props.ok()) {
      options.properties = std::move(*props);
    } else {
      bad = Status::InvalidArgument("--kafka-config: " + props.status().message());
    }
  }
  if (!bad.ok()) {
    std::fprintf(io.err, "cronledger audit-store: %s\n%s", bad.message().c_str(), kUsage);
    return kExitUsage;
  }
  auto store = audit_store::AuditStore::Open(options);
  if (!store.ok()) {
    std::fprintf(io.err, "cronledger audit-store: %s\n", store.status().ToString().c_str());
    return store.status().IsInvalidArgument() ? kExitUsage : kExitFailure;
  }

  if (flags.Has("until-caught-up")) {
    auto report = (*store)->Round();
    if (!report.ok()) {
      std::fprintf(io.err, "cronledger audit-store: %s\n", report.status().ToString().c_str());
      return kExitFailure;
    }
    PrintStates(io, *format, *report);
    for (const std::string& line : report->Describe(options.topic_prefix)) {
      std::fprintf(io.err, "audit-store: %s\n", line.c_str());
    }
    return report->complete() ? kExitOk : kExitFailure;
  }

  // controller-runtime's manager listeners, as `run` has them (docs/run.md "Metrics and probes").
  audit_store::AuditStoreMetrics metrics;
  std::vector<std::unique_ptr<kube::ManagerServer>> endpoints;
  kube::ManagerServerOptions metrics_options;
  metrics_options.metrics = [&metrics] { return metrics.Render(); };
  kube::ManagerServerOptions probe_options;
  probe_options.probes = true;
  probe_options.readyz.push_back({"rounds", [&metrics] { return metrics.Ready(); }});
  for (auto [address, server, what] :
       {std::tuple{&metrics_address, &metrics_options, "metrics"},
        std::tuple{&probe_address, &probe_options, "health probes"}}) {
    if (!*address) continue;
    server->listen = **address;
    auto started = kube::ManagerServer::Start(*server);
    if (!started.ok()) {
      std::fprintf(io.err, "cronledger audit-store: %s: %s\n", what,
                   started.status().ToString().c_str());
      return kExitFailure;
    }
    std::fprintf(io.err, "audit-store: %s on port %u\n", what,
                 static_cast<unsigned>((*started)->port()));
    endpoints.push_back(std::move(started).value());
  }

  g_stop.store(false);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  std::optional<audit_store::RoundReport> last;
  while (!g_stop.load()) {
    const auto started = std::chrono::steady_clock::now();
    auto report = (*store)->Round();
    metrics.Record(report, RealClock().Now());
    if (!report.ok()) {
      // An unreachable cluster is retried: a failed round stored no position past what it
      // committed, so the next one reads again. Anything else needs a person.
      const bool transient = report.status().IsUnavailable();
      std::fprintf(io.err, "cronledger audit-store: %s%s\n", report.status().ToString().c_str(),
                   transient ? " (retrying)" : "");
      if (!transient) {
        std::signal(SIGINT, old_int);
        std::signal(SIGTERM, old_term);
        return kExitFailure;
      }
    } else {
      uint64_t added = 0;
      for (const auto& s : report->sources) added += s.inputs_added + s.decisions_added;
      if (added > 0 || !report->complete()) {
        for (const std::string& line : report->Describe(options.topic_prefix)) {
          std::fprintf(io.err, "audit-store: %s\n", line.c_str());
        }
      }
      last = std::move(*report);
    }
    while (!g_stop.load() && std::chrono::steady_clock::now() - started < interval) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (last) PrintStates(io, *format, *last);
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("audit-store",
                    "consume every replica's ledger stream into the deployment's audit store", Run,
                    kUsage);

}  // namespace cronledger::app
