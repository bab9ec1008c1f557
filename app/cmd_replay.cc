// `cronledger replay [--verify] [--since T] [--until T] [--cronjob NS/NAME] [-l SELECTOR]
// [--set K=V]... [--bundle F | --kafka-brokers B ...]`: folds the recorded inputs through the
// reconciler again (docs/design.md rule 4; docs/replay.md). Prints the derived decision stream;
// --verify compares it with the recorded one (digests of both, the first divergence, exit 1 on
// any); --set prints what-if differences. The history comes from the store, a bundle, or the Kafka
// ledger and decision streams (app/support_replay_kafka.h; a stream with a hole fails --verify).
#include <cstdio>
#include <memory>
#include <optional>

#include "app/command.h"
#include "app/support_replay.h"
#include "app/support_replay_kafka.h"
#include "replay/diff.h"

namespace cronledger::app {
namespace {

using namespace replay_cli;  // NOLINT: the replay commands' shared plumbing

constexpr const char* kUsage =
    "usage: cronledger replay [--verify] [--since T] [--until T] [--cronjob NS/NAME]\n"
    "                         [-l|--selector SELECTOR] [--set K=V]... [--bundle F]\n"
    "                         [--data-dir DIR] [-o table|json|yaml|csv]\n"
    "                         [--kafka-brokers B [--kafka-topic-prefix P] [--kafka-config F]\n"
    "                          [--kafka-source-id ID]]\n"
    "  -l key=value,key!=value,key in (a,b),key notin (a,b),key,!key  (kubectl syntax, on\n"
    "        the recorded CronJobs' labels)\n"
    "  --set spec.schedule=S | spec.timeZone=Z | spec.startingDeadlineSeconds=N |\n"
    "        spec.concurrencyPolicy=Allow|Forbid|Replace | spec.suspend=true|false |\n"
    "        controller.noDowntime=true\n"
    "  --kafka-brokers: read the inputs from P.ledger and the decisions from P.decisions\n"
    "        (default P: cronledger) instead of the store\n"
    "  T: an RFC 3339 time, or a duration before now like kubectl's (--since 1h)\n"
    "  On an audit store (cronledger audit-store) or a bundle set exported from one, --verify\n"
    "  checks every source's history.\n";

model::Json PassJson(const replay::PassSummary& p) {
  return {{"tickSeq", p.tick_seq},
          {"now", FormatRfc3339Nano(p.tick.now)},
          {"cronJob", p.tick.namespace_ + "/" + p.tick.name},
          {"trigger", p.tick.trigger},
          {"viewSeq", p.view_seq},
          {"cronJobSeq", p.cron_job_seq},
          {"jobSeqs", p.job_seqs},
          {"outcomeSeqs", p.outcome_seqs},
          {"problem", p.problem}};
}

model::Json DivergenceJson(const replay::Divergence& d) {
  auto rec = [](const std::optional<model::Decision>& x) {
    return x ? model::EncodeDecision(*x) : model::Json(nullptr);
  };
  return {{"index", d.index},
          {"what", d.what},
          {"recorded", rec(d.recorded)},
          {"derived", rec(d.derived)},
          {"pass", d.pass ? PassJson(*d.pass) : model::Json(nullptr)}};
}

void PrintDivergenceText(std::FILE* out, const replay::ReplayResult& r) {
  const replay::Divergence& d = *r.first_divergence;
  std::fprintf(out, "DIVERGENCE at stream position %llu (%llu in all): %s\n",
               static_cast<unsigned long long>(d.index),
               static_cast<unsigned long long>(r.divergences), d.what.c_str());
  std::fprintf(out, "  recorded: %s\n",
               d.recorded ? model::CanonicalDecisionBytes(*d.recorded).c_str() : "(none)");
  std::fprintf(out, "  derived:  %s\n",
               d.derived ? model::CanonicalDecisionBytes(*d.derived).c_str() : "(none)");
  if (!d.pass) return;
  const replay::PassSummary& p = *d.pass;
  std::string jobs;
  for (const auto& [name, seq] : p.job_seqs) jobs += " " + name + "=#" + std::to_string(seq);
  std::string outcomes;
  for (uint64_t s : p.outcome_seqs) outcomes += " #" + std::to_string(s);
  std::fprintf(
      out,
      "  inputs: tick #%llu (%s/%s, now %s, trigger %s); view as of input #%llu; "
      "CronJob from input #%llu; Jobs:%s; outcomes:%s\n",
      static_cast<unsigned long long>(p.tick_seq), p.tick.namespace_.c_str(), p.tick.name.c_str(),
      FormatRfc3339Nano(p.tick.now).c_str(), p.tick.trigger.c_str(),
      static_cast<unsigned long long>(p.view_seq), static_cast<unsigned long long>(p.cron_job_seq),
      jobs.empty() ? " none" : jobs.c_str(), outcomes.empty() ? " none" : outcomes.c_str());
}

int PrintVerify(const replay::ReplayResult& r, OutputFormat format, const CommandIo& io) {
  const bool match = r.divergences == 0;
  std::vector<model::Json> rows = {{{"stream", "recorded"},
                                    {"decisions", r.recorded_digest.decisions},
                                    {"sha256", r.recorded_digest.sha256}},
                                   {{"stream", "derived"},
                                    {"decisions", r.derived_digest.decisions},
                                    {"sha256", r.derived_digest.sha256}}};
  if (format == OutputFormat::kJson) {
    model::Json j = {{"items", rows},
                     {"match", match},
                     {"divergences", r.divergences},
                     {"passes", r.passes_replayed},
                     {"interruptedPasses", r.interrupted_passes},
                     {"firstDivergence", r.first_divergence ? DivergenceJson(*r.first_divergence)
                                                            : model::Json(nullptr)}};
    std::fprintf(io.out, "%s\n", model::DumpJson(j).c_str());
  } else {
    PrintItems(io.out, format, {"stream", "decisions", "sha256"}, rows);
    if (format == OutputFormat::kTable && !match) PrintDivergenceText(io.out, r);
  }
  std::fprintf(io.err,
               "replay --verify: %s (%llu passes, %llu decisions, %llu interrupted passes)\n",
               match ? "OK, the derived stream equals the recorded stream" : "MISMATCH",
               static_cast<unsigned long long>(r.passes_replayed),
               static_cast<unsigned long long>(r.derived_digest.decisions),
               static_cast<unsigned long long>(r.interrupted_passes));
  if (!match && format != OutputFormat::kTable) PrintDivergenceText(io.err, r);
  return match ? kExitOk : kExitFailure;
}

int PrintWhatIf(const replay::ReplayResult& r, const replay::WhatIf& w, OutputFormat format,
                const CommandIo& io) {
  const auto diffs = replay::DiffTerminal(r.recorded, r.derived);
  std::vector<model::Json> items;
  for (const auto& d : diffs) items.push_back(replay::EncodeSlotDifference(d));
  PrintItems(io.out, format, {"cronJob", "scheduledTime", "change", "recorded", "whatIf"}, items);
  std::string settings;
  for (const std::string& s : w.Describe()) settings += (settings.empty() ? "" : ", ") + s;
  std::fprintf(io.err,
               "what-if (%s): %llu recorded passes re-decided, %llu synthesized; %zu fire time(s) "
               "differ\n",
               settings.c_str(), static_cast<unsigned long long>(r.passes_replayed),
               static_cast<unsigned long long>(r.passes_synthesized), diffs.size());
  return kExitOk;
}

// An audit store (`cronledger audit-store`) or a bundle set exported from one: each source's
// history is replayed and verified on its own, since a replica's decisions are a function of its
// own inputs; the whole matches when every source does.
int VerifySources(std::vector<SourceHistory>& sources, const replay::ReplayOptions& base,
                  OutputFormat format, const CommandIo& io) {
  std::vector<model::Json> rows;
  bool all_match = true;
  for (SourceHistory& h : sources) {
    const std::string& source = h.source;
    auto r = replay::Replay(*h.history.source, base);
    if (!r.ok()) {
      std::fprintf(io.err, "cronledger replay: source %s: %s\n", source.c_str(),
                   r.status().ToString().c_str());
      return kExitFailure;
    }
    const bool match = r->divergences == 0;
    all_match = all_match && match;
    rows.push_back({{"source", source},
                    {"match", match},
                    {"decisions", r->recorded_digest.decisions},
                    {"divergences", r->divergences},
                    {"passes", r->passes_replayed},
                    {"interruptedPasses", r->interrupted_passes},
                    {"recordedSha256", r->recorded_digest.sha256},
                    {"derivedSha256", r->derived_digest.sha256},
                    {"firstDivergence", r->first_divergence ? DivergenceJson(*r->first_divergence)
                                                            : model::Json(nullptr)}});
    std::fprintf(io.err, "replay --verify: source %s: %s (%llu passes, %llu decisions)\n",
                 source.c_str(), match ? "OK" : "MISMATCH",
                 static_cast<unsigned long long>(r->passes_replayed),
                 static_cast<unsigned long long>(r->derived_digest.decisions));
    if (!match) PrintDivergenceText(io.err, *r);
  }
  if (format == OutputFormat::kJson) {
    model::Json j = {{"items", rows}, {"match", all_match}};
    std::fprintf(io.out, "%s\n", model::DumpJson(j).c_str());
  } else {
    PrintItems(io.out, format,
               {"source", "match", "decisions", "divergences", "recordedSha256", "derivedSha256"},
               rows);
  }
  return all_match ? kExitOk : kExitFailure;
}

// The Kafka streams hold a hole: --verify fails without replaying a partial history.
int PrintIncomplete(const KafkaHistoryReport& report, OutputFormat format, const CommandIo& io) {
  std::vector<model::Json> gaps;
  for (const KafkaStreamReport* r : {&report.ledger, &report.decisions}) {
    for (const SeqGap& g : r->gaps) {
      gaps.push_back({{"topic", r->topic}, {"first", g.first}, {"last", g.last}});
    }
  }
  if (format == OutputFormat::kJson) {
    model::Json j = {
        {"items", model::Json::array()}, {"match", false}, {"complete", false}, {"gaps", gaps}};
    std::fprintf(io.out, "%s\n", model::DumpJson(j).c_str());
  } else {
    PrintItems(io.out, format, {"topic", "first", "last"}, gaps);
  }
  std::fprintf(io.err,
               "replay --verify: INCOMPLETE: the Kafka streams miss records (see the gaps above); "
               "a partial history is not replayed\n");
  return kExitFailure;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("output", "o").Value("since").Value("until").Value("cronjob");
  flags.Value("selector", "l");
  flags.Value("set", "", true).Value("bundle").Value("zoneinfo").Switch("verify");
  flags.Value("kafka-brokers").Value("kafka-topic-prefix").Value("kafka-config");
  flags.Value("kafka-source-id");
  Status parsed = flags.Parse(args);
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  auto scope = parsed.ok() ? ScopeFromFlags(flags) : Result<replay::ReplayScope>(parsed);
  replay::ReplayOptions options;
  Status bad = !parsed.ok() ? parsed : !format.ok() ? format.status() : scope.status();
  if (bad.ok()) {
    if (auto sel = flags.Get("selector")) {
      auto parsed_selector = replay::LabelSelector::Parse(*sel);
      if (parsed_selector.ok()) {
        scope->selector = std::move(*parsed_selector);
      } else {
        bad = Status::InvalidArgument("--selector: " + parsed_selector.status().message());
      }
    }
  }
  for (const std::string& s : flags.GetAll("set")) {
    if (bad.ok()) bad = replay::ApplySetting(s, &options.what_if);
  }
  if (bad.ok() && flags.Has("verify") && !options.what_if.empty()) {
    bad = Status::InvalidArgument("--verify and --set exclude each other");
  }
  if (bad.ok() && !flags.positionals().empty())
    bad = Status::InvalidArgument("unexpected argument");
  const bool kafka = flags.Has("kafka-brokers");
  if (bad.ok() && kafka && (flags.Has("bundle") || flags.Has("data-dir"))) {
    bad = Status::InvalidArgument("--kafka-brokers excludes --bundle and --data-dir");
  }
  if (bad.ok() && !kafka &&
      (flags.Has("kafka-topic-prefix") || flags.Has("kafka-config") ||
       flags.Has("kafka-source-id"))) {
    bad = Status::InvalidArgument(
        "--kafka-topic-prefix/--kafka-config/--kafka-source-id need "
        "--kafka-brokers");
  }
  std::optional<KafkaHistoryOptions> kafka_options;
  if (bad.ok() && kafka) {
    auto o = KafkaHistoryOptionsFromFlags(flags);
    if (o.ok()) {
      kafka_options = std::move(*o);
      // A plain replay derives the stream from the inputs alone.
      kafka_options->read_decisions = flags.Has("verify") || !options.what_if.empty();
    } else {
      bad = o.status();
    }
  }
  Histories histories;
  if (bad.ok() && !kafka) {
    auto opened = OpenHistories(flags);
    if (!opened.ok()) {
      std::fprintf(io.err, "cronledger replay: %s\n", opened.status().ToString().c_str());
      return kExitFailure;
    }
    histories = std::move(*opened);
  }
  if (bad.ok() && histories.several && !flags.Has("verify")) {
    bad = Status::InvalidArgument(
        "on an audit store or a bundle set only --verify replays every source; to replay or run "
        "a what-if, name one source's copy (--data-dir DIR/sources/<source>) or export one");
  }
  if (!bad.ok()) {
    std::fprintf(io.err, "cronledger replay: %s\n%s", bad.message().c_str(), kUsage);
    return kExitUsage;
  }
  std::unique_ptr<replay::RecordSource> kafka_source;
  if (kafka_options) {
    auto read = ReadKafkaHistory(*kafka_options);
    if (!read.ok()) {
      std::fprintf(io.err, "cronledger replay: %s\n", read.status().ToString().c_str());
      return kExitFailure;
    }
    for (const std::string& line : read->report.Describe()) {
      std::fprintf(io.err, "replay: %s\n", line.c_str());
    }
    if (!read->report.complete()) {
      if (flags.Has("verify")) return PrintIncomplete(read->report, *format, io);
      std::fprintf(io.err,
                   "replay: WARNING: the Kafka streams miss records; replaying a partial history "
                   "(--verify refuses it)\n");
    }
    kafka_source = std::move(read->source);
  }
  if (histories.several) {
    options.scope = *scope;
    options.zoneinfo_dir = ZoneinfoDir(flags);
    options.verify_only = true;
    options.decide_on_second_thread = true;
    return VerifySources(histories.sources, options, *format, io);
  }
  History history = kafka_source ? History{nullptr, std::move(kafka_source)}
                                 : std::move(histories.sources[0].history);
  options.scope = *scope;
  options.zoneinfo_dir = ZoneinfoDir(flags);
  options.progress = ProgressPrinter(io.err, "replay");
  // --verify reports only the digests and the first divergence: the fast comparison, with the
  // passes decided on a second thread (docs/replay.md "Throughput").
  options.verify_only = flags.Has("verify");
  options.decide_on_second_thread = flags.Has("verify");
  auto result = replay::Replay(*history.source, options);
  if (!result.ok()) {
    std::fprintf(io.err, "cronledger replay: %s\n", result.status().ToString().c_str());
    return kExitFailure;
  }
  if (flags.Has("verify")) return PrintVerify(*result, *format, io);
  if (!options.what_if.empty()) return PrintWhatIf(*result, options.what_if, *format, io);
  PrintDecisions(io.out, *format, result->derived);
  std::fprintf(io.err, "replay: %llu passes, %llu decisions, sha256 %s\n",
               static_cast<unsigned long long>(result->passes_replayed),
               static_cast<unsigned long long>(result->derived_digest.decisions),
               result->derived_digest.sha256.c_str());
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("replay", "replay the ledger through the reconciler (verify, what-if)", Run,
                    kUsage);

}  // namespace cronledger::app
