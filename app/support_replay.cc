#include "app/support_replay.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "replay/bundle.h"

namespace cronledger::app::replay_cli {

namespace {

// The store's history as of the command's start (one catch-up: its input and decision scans, two
// threads in `replay --verify`, see the same units and never wait for each other).
Result<History> StoreHistory(std::unique_ptr<store::Ledger> ledger) {
  History h;
  h.ledger = std::move(ledger);
  h.source = std::make_unique<replay::LedgerSource>(*h.ledger);
  return h;
}

Result<History> BundleHistory(std::string_view text) {
  History h;
  CL_ASSIGN_OR_RETURN(replay::LoadedBundle loaded, replay::ReadBundle(text));
  h.source = std::move(loaded.source);
  return h;
}

Result<Histories> BundleSetHistories(const std::string& path, std::string_view text) {
  CL_ASSIGN_OR_RETURN(replay::LoadedBundleSet set, replay::ReadBundleSet(text));
  if (!set.checksum_matches) {
    return Status::Corruption("bundle set " + path +
                              ": the checksum does not match its lines (changed after export)");
  }
  Histories out;
  out.several = true;
  if (!set.sections_match_header) {
    return Status::Corruption("bundle set " + path +
                              ": its sections are not the sources its first line names");
  }
  for (const replay::BundleSection& section : set.sections) {
    auto h = BundleHistory(section.bundle);
    if (!h.ok()) {
      return Status::Corruption("bundle set " + path + ": source " + section.source + ": " +
                                h.status().message());
    }
    out.sources.push_back({section.source, std::move(*h)});
  }
  return out;
}

}  // namespace

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<replay::trail::Checkpoint> ReadCheckpointFile(const std::string& path) {
  CL_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  return replay::trail::ParseCheckpoint(text);
}

Result<Histories> OpenHistories(const Flags& flags) {
  Histories out;
  if (auto bundle = flags.Get("bundle")) {
    CL_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(*bundle));
    if (replay::IsBundleSet(text)) return BundleSetHistories(*bundle, text);
    CL_ASSIGN_OR_RETURN(History h, BundleHistory(text));
    out.sources.push_back({"", std::move(h)});
    return out;
  }
  const std::string dir = flags.GetOr("data-dir", "./data");
  if (!audit_store::IsAuditStoreDir(dir)) {
    CL_ASSIGN_OR_RETURN(auto ledger, OpenLedgerForAudit(dir, Duration::max()));
    CL_ASSIGN_OR_RETURN(History h, StoreHistory(std::move(ledger)));
    out.sources.push_back({"", std::move(h)});
    return out;
  }
  out.several = true;
  CL_ASSIGN_OR_RETURN(auto copies, audit_store::OpenAuditStoreSources(dir, Duration::max()));
  for (auto& [source, ledger] : copies) {
    CL_ASSIGN_OR_RETURN(History h, StoreHistory(std::move(ledger)));
    out.sources.push_back({source, std::move(h)});
  }
  return out;
}

Result<History> OpenHistory(const Flags& flags) {
  if (auto bundle = flags.Get("bundle")) {
    CL_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(*bundle));
    if (replay::IsBundleSet(text)) {
      return Status::FailedPrecondition(
          *bundle +
          " is a bundle set (export of an audit store, one bundle per source); this command "
          "reads one source's history: export it from the source's copy "
          "(--data-dir D/sources/<source>)");
    }
    return BundleHistory(text);
  }
  // OpenLedgerForAudit refuses an audit store, naming its copies.
  CL_ASSIGN_OR_RETURN(auto ledger,
                      OpenLedgerForAudit(flags.GetOr("data-dir", "./data"), Duration::max()));
  return StoreHistory(std::move(ledger));
}

Status CheckCronJobRef(const std::string& ref) {
  const size_t slash = ref.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == ref.size() ||
      ref.find('/', slash + 1) != std::string::npos) {
    return Status::InvalidArgument("want NAMESPACE/NAME, got \"" + ref + "\"");
  }
  return Status::Ok();
}

Result<Time> RequiredTimeFlag(const Flags& flags, const std::string& name) {
  CL_ASSIGN_OR_RETURN(std::optional<Time> t, TimeFlag(flags, name, RealClock().Now()));
  if (!t) return Status::InvalidArgument("--" + name + " is required");
  return *t;
}

Result<replay::ReplayScope> ScopeFromFlags(const Flags& flags) {
  replay::ReplayScope scope;
  const Time now = RealClock().Now();
  CL_ASSIGN_OR_RETURN(std::optional<Time> since, TimeFlag(flags, "since", now));
  CL_ASSIGN_OR_RETURN(std::optional<Time> until, TimeFlag(flags, "until", now));
  scope.since = since;
  scope.until = until;
  if (auto cj = flags.Get("cronjob")) {
    CL_RETURN_IF_ERROR(CheckCronJobRef(*cj));
    scope.cron_job = *cj;
  }
  return scope;
}

std::function<void(const replay::ReplayProgress&)> ProgressPrinter(std::FILE* err,
                                                                   std::string what) {
  const bool tty = isatty(fileno(err)) != 0;
  return [err, tty, what](const replay::ReplayProgress& p) {
    if (tty) {
      const int pct =
          p.total > 0 ? static_cast<int>(std::min<uint64_t>(100, p.records * 100 / p.total)) : 0;
      const int filled = pct / 5;
      std::fprintf(err, "\r%s [%s%s] %3d%% %llu records%s", what.c_str(),
                   std::string(static_cast<size_t>(filled), '#').c_str(),
                   std::string(static_cast<size_t>(20 - filled), '.').c_str(), pct,
                   static_cast<unsigned long long>(p.records), p.done ? "\n" : "");
    } else {
      std::fprintf(
          err, "%s\n",
          model::DumpJson(
              {{"progress",
                {{"command", what}, {"records", p.records}, {"total", p.total}, {"done", p.done}}}})
              .c_str());
    }
    std::fflush(err);
  };
}

void PrintDecisions(std::FILE* out, OutputFormat format,
                    const std::vector<model::Decision>& decisions) {
  std::vector<model::Json> items;
  items.reserve(decisions.size());
  const bool rows = format == OutputFormat::kTable || format == OutputFormat::kCsv;
  for (const model::Decision& d : decisions) {
    if (!rows) {
      items.push_back(model::EncodeDecision(d));
      continue;
    }
    items.push_back({{"time", FormatRfc3339Nano(d.time)},
                     {"cronJob", d.cron_job.namespace_ + "/" + d.cron_job.name},
                     {"action", model::DecisionActionName(d.action)},
                     {"scheduledTime", d.scheduled_time ? FormatRfc3339(*d.scheduled_time) : ""},
                     {"reason", d.reason},
                     {"job", d.job_name.value_or("")},
                     {"tick", d.cause.tick_seq}});
  }
  PrintItems(out, format, {"time", "cronJob", "action", "scheduledTime", "reason", "job", "tick"},
             items);
}

std::string ZoneinfoDir(const Flags& flags) {
  return flags.GetOr("zoneinfo", "/usr/share/zoneinfo");
}

}  // namespace cronledger::app::replay_cli
