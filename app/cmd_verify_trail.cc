// `cronledger verify-trail (--data-dir DIR | --bundle FILE) --checkpoint FILE`: recomputes the
// audit trail's chains of a store or a trail bundle and compares them with a saved checkpoint
// (replay/trail.h). Exit 0 when intact, 1 naming the first altered, removed or inserted record. An
// audit store, or a bundle set exported from one, is checked against a checkpoint of the audit
// store: each source's copy against the chains that name it.
#include <cstdio>
#include <map>
#include <memory>

#include "app/command.h"
#include "app/flags.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/support_replay.h"
#include "replay/bundle.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger verify-trail (--data-dir DIR | --bundle FILE) --checkpoint FILE\n"
    "         [-o table|json]\n"
    "Checks every record a checkpoint (`cronledger checkpoint -o json`) covers. Exit 0: intact;\n"
    "1: the first record that was altered, removed or inserted is named; records written after\n"
    "the checkpoint are counted as not covered. --bundle: a trail bundle (see `cronledger "
    "export`).\n"
    "On an audit store (cronledger audit-store) or a trail bundle set exported from it,\n"
    "give a checkpoint of the audit store: each source's copy is checked against its chains.\n";

std::string Describe(const replay::trail::ChainVerdict& c) {
  std::string out = c.copy_of ? "source " + *c.copy_of + ": " : "";
  out += c.source + " " + c.log + ": ";
  if (c.intact) {
    out += "intact, " + std::to_string(c.verified) + " records verified";
  } else if (c.problem) {
    const auto& p = *c.problem;
    out += std::string(replay::trail::ProblemKindName(p.kind)) + ": ";
    out += p.record.empty() ? "" : p.record + ": ";
    out += p.detail;
  }
  if (c.removed_by_retention != 0) {
    out += "; " + std::to_string(c.removed_by_retention) + " removed by retention";
  }
  if (c.not_covered != 0) {
    out += "; " + std::to_string(c.not_covered) + " not covered (written after the checkpoint)";
  }
  return out;
}

// Every source's copy of an audit store, each read as of the check's start.
Result<replay::trail::TrailVerdict> VerifyAuditStore(const std::string& dir,
                                                     const replay::trail::Checkpoint& checkpoint) {
  CL_ASSIGN_OR_RETURN(auto copies, audit_store::OpenAuditStoreSources(dir, Duration::max()));
  std::map<std::string, store::Ledger*> by_source;
  std::vector<std::string> present;
  for (auto& [source, ledger] : copies) {
    by_source[source] = ledger.get();
    present.push_back(source);
  }
  return replay::trail::VerifySources(
      checkpoint, present, [&](const std::string& source, const replay::trail::Checkpoint& own) {
        return replay::trail::VerifyStore(*by_source.at(source), own);
      });
}

// Every section of a bundle set. A set whose checksum or list of sources no longer matches was
// changed: noted, and the sections' own checks locate the change.
Result<replay::trail::TrailVerdict> VerifyBundleSet(std::string_view text,
                                                    const replay::trail::Checkpoint& checkpoint) {
  CL_ASSIGN_OR_RETURN(replay::LoadedBundleSet set, replay::ReadBundleSet(text));
  std::map<std::string, std::string_view> by_source;
  std::vector<std::string> present;
  for (const replay::BundleSection& s : set.sections) {
    by_source[s.source] = s.bundle;
    present.push_back(s.source);
  }
  auto verdict = replay::trail::VerifySources(
      checkpoint, present, [&](const std::string& source, const replay::trail::Checkpoint& own) {
        return replay::trail::VerifyBundle(by_source.at(source), own);
      });
  if (verdict.ok() && !set.checksum_matches) {
    verdict->notes.insert(verdict->notes.begin(),
                          "the bundle set's checksum does not match its lines: it was changed "
                          "after export");
  }
  if (verdict.ok() && !set.sections_match_header) {
    verdict->notes.insert(verdict->notes.begin(),
                          "the bundle set's sections are not the sources its first line names");
  }
  return verdict;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("bundle").Value("checkpoint").Value("output", "o");
  Status parsed = flags.Parse(args);
  const std::string output = flags.GetOr("output", "table");
  if (parsed.ok() && !flags.Has("checkpoint")) {
    parsed = Status::InvalidArgument("--checkpoint is required");
  } else if (parsed.ok() && flags.Has("bundle") == flags.Has("data-dir")) {
    parsed = Status::InvalidArgument("give one of --data-dir and --bundle");
  } else if (parsed.ok() && output != "table" && output != "json") {
    parsed = Status::InvalidArgument("-o: want table or json, got \"" + output + "\"");
  } else if (parsed.ok() && !flags.positionals().empty()) {
    parsed = Status::InvalidArgument("unexpected argument " + flags.positionals()[0]);
  }
  auto checkpoint = parsed.ok() ? replay_cli::ReadCheckpointFile(*flags.Get("checkpoint"))
                                : Result<replay::trail::Checkpoint>(parsed);
  if (!checkpoint.ok()) {
    std::fprintf(io.err, "cronledger verify-trail: %s\n%s", checkpoint.status().message().c_str(),
                 parsed.ok() ? "" : kUsage);
    return kExitUsage;
  }
  Result<replay::trail::TrailVerdict> verdict = Status::Internal("not verified");
  if (flags.Has("bundle")) {
    auto bundle = replay_cli::ReadWholeFile(*flags.Get("bundle"));
    if (!bundle.ok()) {
      std::fprintf(io.err, "cronledger verify-trail: %s\n", bundle.status().message().c_str());
      return kExitUsage;
    }
    verdict = replay::IsBundleSet(*bundle) ? VerifyBundleSet(*bundle, *checkpoint)
                                           : replay::trail::VerifyBundle(*bundle, *checkpoint);
  } else if (audit_store::IsAuditStoreDir(*flags.Get("data-dir"))) {
    verdict = VerifyAuditStore(*flags.Get("data-dir"), *checkpoint);
  } else {
    // One consistent state for the whole check: no catch-up after the open.
    auto ledger = OpenLedgerForAudit(*flags.Get("data-dir"), Duration::max());
    verdict = ledger.ok() ? replay::trail::VerifyStore(**ledger, *checkpoint)
                          : Result<replay::trail::TrailVerdict>(ledger.status());
  }
  if (!verdict.ok()) {
    // A checkpoint of the other kind (one ledger's, an audit store's) is a usage error; a bundle
    // that does not parse was changed too: that is a finding.
    std::fprintf(io.err, "cronledger verify-trail: %s\n", verdict.status().ToString().c_str());
    return verdict.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (output == "json") {
    std::fprintf(io.out, "%s\n", replay::trail::VerdictJson(*verdict).dump(2).c_str());
  } else {
    for (const std::string& note : verdict->notes) std::fprintf(io.out, "note: %s\n", note.c_str());
    for (const auto& c : verdict->chains) std::fprintf(io.out, "%s\n", Describe(c).c_str());
    std::fprintf(io.out, "%s\n", verdict->intact() ? "trail intact" : "trail NOT intact");
  }
  return verdict->intact() ? kExitOk : kExitFailure;
}

}  // namespace

CL_REGISTER_COMMAND("verify-trail", "check a store or a trail bundle against a saved checkpoint",
                    Run, kUsage);

}  // namespace cronledger::app
