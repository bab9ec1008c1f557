// `cronledger retention`: applies age-based retention to the ledger as a maintenance step
// (docs/ledger.md "Maintenance"). The default of the ledger is to keep everything; this command
// deletes only what its flags name, never what the view points at.
#include <chrono>
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_admin.h"
#include "app/system_clock.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger retention [--data-dir DIR] [--raw-max-age DUR] [--log-max-age DUR]\n"
    "         [--dry-run] [-o table|json|yaml|csv]\n"
    "Deletes the raw bytes of watch events older than --raw-max-age (the normalized record stays)\n"
    "and input records older than --log-max-age, never what the view points at. At least one\n"
    "age is required (the ledger keeps everything by default). --dry-run reports the counts and\n"
    "deletes nothing; it opens the ledger read-only. While `run` or `ingest` holds the ledger,\n"
    "the deletion is done by that process (through admin.sock in the data directory).\n"
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
  const std::string data_dir = flags.GetOr("data-dir", "./data");
  const model::Json request = {{"op", "retention"},
                               {"rawMaxAgeNanos", options.raw_max_age.count()},
                               {"logMaxAgeNanos", options.log_max_age.count()},
                               {"dryRun", options.dry_run}};
  // A dry run reads (read-only open, beside any writer); a real one is done by the process
  // holding the ledger, if any, else by this one.
  Result<model::Json> answer = Status::NotFound("");
  if (!options.dry_run) {
    answer = CallAdminSocket(AdminSocketPath(data_dir), request, std::chrono::hours(1));
    if (!answer.ok() && answer.status().code() != Status::Code::kNotFound) {
      std::fprintf(io.err, "cronledger retention: %s\n", answer.status().ToString().c_str());
      return kExitFailure;
    }
  }
  if (!answer.ok()) {
    store::LedgerOptions lo;
    lo.path = data_dir;
    lo.create_if_missing = false;
    lo.read_only = options.dry_run;
    auto ledger = store::Ledger::Open(lo);
    if (!ledger.ok()) {
      std::fprintf(io.err, "cronledger retention: %s\n", ledger.status().ToString().c_str());
      return kExitFailure;
    }
    answer = RunLedgerMaintenance(**ledger, request, RealClock().Now());
  }
  if (!model::BoolOr(*answer, "ok") || !(*answer).contains("item")) {
    std::fprintf(io.err, "cronledger retention: %s\n",
                 model::StringOr(*answer, "error", "failed").c_str());
    return kExitFailure;
  }
  PrintItems(io.out, *format, {"rawPruned", "inputsPruned", "pinned", "unchained", "dryRun"},
             {(*answer)["item"]});
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("retention", "delete old raw bytes and log records (never what the view uses)",
                    Run, kUsage);

}  // namespace cronledger::app
