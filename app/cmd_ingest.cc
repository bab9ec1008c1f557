// `cronledger ingest --from FILE|-`: appends a recorded Kubernetes watch stream to the ledger.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_admin.h"
#include "app/system_clock.h"
#include "ingest/stream_ingest.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger ingest --from FILE|- [--data-dir DIR] [--sync always|batch|none]\n"
    "         [--batch N] [--source-id ID] [--restart] [--ack] [-o table|json|yaml|csv]\n"
    "         [--raw-max-age DUR] [--log-max-age DUR]\n"
    "Reads watch events (JSON lines or kubectl -o json output), quarantines what it cannot\n"
    "accept, and resumes a file after its last committed document. --ack prints one line per\n"
    "committed unit on stdout. --raw-max-age/--log-max-age apply retention afterwards.\n";

struct Options {
  std::string from;
  store::LedgerOptions ledger;
  ingest::StreamIngestOptions stream;
  bool ack = false;
  OutputFormat format = OutputFormat::kTable;
  store::RetentionOptions retention;
};

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  Flags flags;
  flags.Value("from").Value("data-dir").Value("sync").Value("batch").Value("source-id");
  flags.Value("output", "o").Value("raw-max-age").Value("log-max-age");
  flags.Switch("restart").Switch("ack");
  CL_RETURN_IF_ERROR(flags.Parse(args));
  Options o;
  if (!flags.Has("from")) return Status::InvalidArgument("--from is required");
  o.from = *flags.Get("from");
  o.ledger.path = flags.GetOr("data-dir", "./data");
  CL_ASSIGN_OR_RETURN(o.ledger.sync, store::ParseSyncMode(flags.GetOr("sync", "batch")));
  CL_ASSIGN_OR_RETURN(o.format, ParseOutputFormat(flags.GetOr("output", "table")));
  CL_ASSIGN_OR_RETURN(o.stream.batch_documents,
                      flags.Uint("batch", 1, 1'000'000, o.stream.batch_documents));
  for (const auto& [flag, out] : {std::pair{"raw-max-age", &o.retention.raw_max_age},
                                  std::pair{"log-max-age", &o.retention.log_max_age}}) {
    if (flags.Has(flag)) {
      CL_ASSIGN_OR_RETURN(*out, ParseGoDuration(*flags.Get(flag)));
    }
  }
  o.ack = flags.Has("ack");
  o.stream.resume = !flags.Has("restart");
  if (o.from == "-") {
    // A pipe cannot be checked for being the same stream, so stdin resumes only when the caller
    // names the stream.
    o.stream.source = flags.GetOr("source-id", "stdin");
    o.stream.resume = o.stream.resume && flags.Has("source-id");
    o.stream.label = "stdin";
  } else {
    std::error_code ec;
    auto abs = std::filesystem::absolute(o.from, ec);
    o.stream.source =
        flags.GetOr("source-id", "file:" + (ec ? o.from : abs.lexically_normal().string()));
    o.stream.label = o.from;
  }
  return o;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  auto parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger ingest: %s\n%s", parsed.status().message().c_str(), kUsage);
    return kExitUsage;
  }
  Options& o = *parsed;
  const int fd = o.from == "-" ? ::dup(fileno(io.in)) : ::open(o.from.c_str(), O_RDONLY);
  if (fd < 0) {
    std::fprintf(io.err, "cronledger ingest: cannot open %s\n", o.from.c_str());
    return kExitUsage;
  }
  auto ledger = store::Ledger::Open(o.ledger);
  if (!ledger.ok()) {
    ::close(fd);
    std::fprintf(io.err, "cronledger ingest: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  // backup and retention ask this process while it holds the ledger (app/support_admin.h).
  std::unique_ptr<AdminSocket> admin =
      StartAdminSocket("ingest", o.ledger.path, **ledger, RealClock());
  const bool tty = ::isatty(fileno(io.err)) != 0;
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  auto on_commit = [&](const ingest::IngestProgress& p) {
    if (o.ack) {
      // Printed only after the unit is committed (and fsynced with --sync always).
      std::fprintf(
          io.out, "committed offset=%llu line=%llu seqs=%llu-%llu events=%llu quarantined=%llu\n",
          static_cast<unsigned long long>(p.offset), static_cast<unsigned long long>(p.line),
          static_cast<unsigned long long>(p.first_seq), static_cast<unsigned long long>(p.last_seq),
          static_cast<unsigned long long>(p.events),
          static_cast<unsigned long long>(p.quarantined));
      std::fflush(io.out);
    }
    const auto now = std::chrono::steady_clock::now();
    if (tty && now - last_progress > std::chrono::milliseconds(100)) {
      last_progress = now;
      std::fprintf(io.err, "\r%llu events, %llu quarantined, %.1f MB",
                   static_cast<unsigned long long>(p.events),
                   static_cast<unsigned long long>(p.quarantined),
                   static_cast<double>(p.offset - p.resumed_from) / 1e6);
      std::fflush(io.err);
    }
  };
  auto result = ingest::IngestStream(fd, ledger->get(), o.stream, on_commit);
  ::close(fd);
  admin.reset();
  if (tty) std::fprintf(io.err, "\r\033[K");
  if (!result.ok()) {
    std::fprintf(io.err, "cronledger ingest: %s\n", result.status().ToString().c_str());
    return kExitFailure;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int exit_code = kExitOk;
  model::Json summary = {
      {"source", o.stream.source},
      {"documents", result->documents},
      {"events", result->events},
      {"quarantined", result->quarantined},
      {"resumedFrom", result->resumed_from},
      {"seconds", seconds},
      {"eventsPerSecond", seconds > 0 ? static_cast<double>(result->events) / seconds : 0.0}};
  if (o.retention.raw_max_age > Duration::zero() || o.retention.log_max_age > Duration::zero()) {
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    auto report = (*ledger)->ApplyRetention(
        o.retention,
        Time::FromUnix(std::chrono::duration_cast<std::chrono::seconds>(wall).count()));
    if (!report.ok()) {
      std::fprintf(io.err, "cronledger ingest: retention: %s\n",
                   report.status().ToString().c_str());
      exit_code = kExitFailure;
    } else {
      summary["rawPruned"] = report->raw_deleted;
      summary["inputsPruned"] = report->inputs_deleted;
    }
  }
  PrintItems(io.out, o.format,
             {"source", "documents", "events", "quarantined", "seconds", "eventsPerSecond"},
             {summary});
  return exit_code;
}

}  // namespace

CL_REGISTER_COMMAND("ingest", "append a recorded watch stream (JSON lines) to the ledger", Run,
                    kUsage);

}  // namespace cronledger::app
