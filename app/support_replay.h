#pragma once

// Shared plumbing of the replay commands (replay, why, state, export): flags, opening the
// history (a store or a bundle), progress on stderr, and printing decisions.

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/flags.h"
#include "app/output.h"
#include "model/decision.h"
#include "model/result.h"
#include "replay/engine.h"
#include "replay/source.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cronledger::app::replay_cli {

// A history to replay: the store under --data-dir, or a --bundle file.
struct History {
  std::unique_ptr<store::Ledger> ledger;  // set when reading a store
  std::unique_ptr<replay::RecordSource> source;
};

// One source's history of an audit store or a bundle set ("" for a single ledger or bundle).
struct SourceHistory {
  std::string source;
  History history;
};
// What --bundle F (when given) or the store at --data-dir (default ./data) holds, opened
// read-only (OpenLedgerForAudit: never created or written, usable while a writer holds it; one
// catch-up, at open). `several`: an audit store (each source's copy) or a bundle set (each
// section), in source order; otherwise one unnamed history. Corruption for a set whose checksum
// or sections do not match.
struct Histories {
  bool several = false;
  std::vector<SourceHistory> sources;
};
Result<Histories> OpenHistories(const Flags& flags);
// One history: FailedPrecondition for an audit store or a bundle set, naming how to pick one.
Result<History> OpenHistory(const Flags& flags);

// The bytes of a file. NotFound naming it.
Result<std::string> ReadWholeFile(const std::string& path);
// A checkpoint file (`cronledger checkpoint -o json`): NotFound, or InvalidArgument naming what
// is wrong.
Result<replay::trail::Checkpoint> ReadCheckpointFile(const std::string& path);

// --since/--until (app/flags.h TimeFlag: RFC 3339 or a duration before now) and --cronjob
// NS/NAME into a scope. InvalidArgument naming the flag.
Result<replay::ReplayScope> ScopeFromFlags(const Flags& flags);
// "NS/NAME" with both parts non-empty.
Status CheckCronJobRef(const std::string& ref);
// A time flag that must be given (app/flags.h TimeFlag).
Result<Time> RequiredTimeFlag(const Flags& flags, const std::string& name);

// Progress on `err`: a bar when it is a terminal, JSON lines ({"progress": {...}}) otherwise.
std::function<void(const replay::ReplayProgress&)> ProgressPrinter(std::FILE* err,
                                                                   std::string what);

// One row per decision (table/csv), the decision records (json/yaml).
void PrintDecisions(std::FILE* out, OutputFormat format,
                    const std::vector<model::Decision>& decisions);

// `--zoneinfo DIR` (default /usr/share/zoneinfo).
std::string ZoneinfoDir(const Flags& flags);

}  // namespace cronledger::app::replay_cli
