// `cronledger retention`: applies age-based retention to the ledger as a maintenance step
// (docs/ledger.md "Maintenance"). The default of the ledger is to keep everything; this command
// deletes only what its flags name, never what the view points at.
#include <chrono>
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger retention [--data-dir DIR] [--raw-max-age DUR] [--log-max-age DUR]\n"
    "         [--dry-run] [-o table|json|yaml|csv]\n"
    "Deletes the raw bytes of watch events older than --raw-max-age (the normalized record stays)\n"
    "and input records older than --log-max-age, never what the view points at. At least one\n"
    "age is required (the ledger keeps everything by default). --dry-run reports the counts and\n"
    "deletes nothing; it opens the ledger read-only, so it works while `run` or `ingest` holds "
    "it.\n"
    "A store with an audit trail (`cronledger checkpoint`) has its trail brought up to date "
    "first;\nretention removes only what the trail has chained (docs/audit.md).\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("raw-max-age").Value("log-max-age").Value("output", "o");
  flags.Switch("dry-run");
  Status parsed = flags.Parse(args);
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  store::RetentionOptions options;
  for (const auto& [flag, out] : {std::pair{"raw-max-age", &options.raw_max_age},
                                  std::pair{"log-max-age", &options.log_max_age}}) {
    if (!parsed.ok() || !flags.Has(flag)) continue;
    auto d = ParseGoDuration(*flags.Get(flag));
    if (!d.ok()) {
      parsed = Status::InvalidArgument(std::string("--") + flag + ": " + d.status().message());
    } else if (*d <= Duration::zero()) {
      parsed = Status::InvalidArgument(std::string("--") + flag + " must be positive");
    } else {
      *out = *d;
    }
  }
  if (parsed.ok() && format.ok() && options.raw_max_age == Duration::zero() &&
      options.log_max_age == Duration::zero()) {
    parsed = Status::InvalidArgument(
        "nothing to do: give --raw-max-age and/or --log-max-age (the ledger keeps everything by "
        "default)");
  }
  if (!parsed.ok() || !format.ok()) {
    std::fprintf(io.err, "cronledger retention: %s\n%s",
                 (parsed.ok() ? format.status() : parsed).message().c_str(), kUsage);
    return kExitUsage;
  }
  options.dry_run = flags.Has("dry-run");
  store::LedgerOptions lo;
  lo.path = flags.GetOr("data-dir", "./data");
  lo.create_if_missing = false;
  lo.read_only = options.dry_run;
  auto ledger = store::Ledger::Open(lo);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger retention: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  const Time now = Time::FromUnix(wall / 1000000000, static_cast<int32_t>(wall % 1000000000));
  // The trail chains what retention is about to delete or prune, so that what remains stays
  // verifiable against earlier checkpoints (replay/trail.h).
  Status trail = Status::Ok();
  if (!options.dry_run) {
    auto has_trail = replay::trail::HasTrail(**ledger);
    trail = has_trail.ok() && *has_trail ? replay::trail::UpdateTrail(**ledger, {}, now).status()
                                         : has_trail.status();
  }
  if (!trail.ok()) {
    std::fprintf(io.err, "cronledger retention: audit trail: %s\n", trail.ToString().c_str());
    return kExitFailure;
  }
  auto report = (*ledger)->ApplyRetention(options, now);
  if (!report.ok()) {
    std::fprintf(io.err, "cronledger retention: %s\n", report.status().ToString().c_str());
    return kExitFailure;
  }
  PrintItems(io.out, *format, {"rawPruned", "inputsPruned", "pinned", "unchained", "dryRun"},
             {model::Json{{"rawPruned", report->raw_deleted},
                          {"inputsPruned", report->inputs_deleted},
                          {"pinned", report->pinned},
                          {"unchained", report->unchained},
                          {"dryRun", report->dry_run}}});
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("retention", "delete old raw bytes and log records (never what the view uses)",
                    Run, kUsage);

}  // namespace cronledger::app
