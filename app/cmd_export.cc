// `cronledger export [--since T] [--until T] [--cronjob NS/NAME] > incident.bundle`: the records
// needed to replay a window without the store (replay/bundle.h, docs/replay.md "Bundles"). On an
// audit store, a bundle set: each source's copy exported the same way.
#include <cstdio>

#include "app/command.h"
#include "app/support_replay.h"
#include "model/timezone_version.h"
#include "replay/bundle.h"
#include "replay/trail.h"

namespace cronledger::app {
namespace {

using namespace replay_cli;  // NOLINT: the replay commands' shared plumbing

constexpr const char* kUsage =
    "usage: cronledger export [--since T] [--until T] [--cronjob NS/NAME] [--data-dir DIR] "
    "> FILE\n"
    "       cronledger export --trail [--data-dir DIR] > FILE\n"
    "T: an RFC 3339 time, or a duration before now like kubectl's (--since 1h).\n"
    "--trail: every record with its audit trail leaf, for `cronledger verify-trail`.\n"
    "On an audit store (cronledger audit-store): a bundle set, one bundle per source.\n";

// One history's bundle (a trail bundle with --trail).
Result<std::string> ExportOne(History& history, const Flags& flags,
                              const replay::ReplayScope& scope) {
  CL_ASSIGN_OR_RETURN(store::LedgerMeta meta, history.ledger->Meta());
  replay::BundleHeader header;
  header.schema_version = meta.schema_version;
  // The header's tzdata is "" when the release is unknown (replay/bundle.h).
  const Result<std::string> tzdata = model::ReadTzdataVersion(ZoneinfoDir(flags));
  header.tzdata = tzdata.ok() ? *tzdata : "";
  if (flags.Has("trail")) {
    return replay::trail::ExportTrailBundle(*history.ledger, header.schema_version, header.tzdata);
  }
  return replay::ExportBundle(*history.source, scope, header);
}

Result<std::string> Export(const Flags& flags, const replay::ReplayScope& scope) {
  CL_ASSIGN_OR_RETURN(Histories histories, OpenHistories(flags));
  if (!histories.several) return ExportOne(histories.sources[0].history, flags, scope);
  std::vector<replay::BundleSection> sections;
  for (SourceHistory& s : histories.sources) {
    auto bundle = ExportOne(s.history, flags, scope);
    if (!bundle.ok()) {
      return Status::Corruption("source " + s.source + ": " + bundle.status().ToString());
    }
    sections.push_back({s.source, std::move(*bundle)});
  }
  return replay::WriteBundleSet(sections);
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("since").Value("until").Value("cronjob").Value("zoneinfo");
  flags.Switch("trail");
  Status parsed = flags.Parse(args);
  if (parsed.ok() && flags.Has("trail") &&
      (flags.Has("since") || flags.Has("until") || flags.Has("cronjob"))) {
    parsed =
        Status::InvalidArgument("--trail exports every record: no --since, --until or --cronjob");
  }
  auto scope = parsed.ok() ? ScopeFromFlags(flags) : Result<replay::ReplayScope>(parsed);
  if (!scope.ok() || !flags.positionals().empty()) {
    std::fprintf(io.err, "cronledger export: %s\n%s",
                 scope.ok() ? "unexpected argument" : scope.status().message().c_str(), kUsage);
    return kExitUsage;
  }
  auto bundle = Export(flags, *scope);
  if (!bundle.ok()) {
    std::fprintf(io.err, "cronledger export: %s\n", bundle.status().ToString().c_str());
    return kExitFailure;
  }
  if (std::fwrite(bundle->data(), 1, bundle->size(), io.out) != bundle->size() ||
      std::fflush(io.out) != 0) {
    std::fprintf(io.err, "cronledger export: write failed\n");
    return kExitFailure;
  }
  std::fprintf(io.err, "export: %zu bytes\n", bundle->size());
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("export", "write a self-contained bundle of a window of the ledger", Run,
                    kUsage);

}  // namespace cronledger::app
