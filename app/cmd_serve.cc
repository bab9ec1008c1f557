// `cronledger serve`: the read-only audit HTTP API and timeline page over a store
// (docs/audit.md "Serving").
#include <signal.h>

#include <cstdio>
#include <string>

#include "app/command.h"
#include "app/flags.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "audit/server.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger serve --listen HOST:PORT --token-file F [--data-dir DIR]\n"
    "                        [--tls-cert PEM --tls-key PEM] [--rate N] [--burst N]\n"
    "                        [--zoneinfo DIR] [--refresh DUR]\n"
    "Serves the audit API (/v1/...), /metrics, /healthz, /readyz and the timeline page (/).\n"
    "The store is opened read-only: a running `cronledger run` or `ingest` may hold it. Answers\n"
    "lag its writer by at most --refresh (Go duration, default 1s; 0s: catch up before every\n"
    "read).\n"
    "On an audit store (cronledger audit-store) every route answers over all its sources.\n"
    "Port 0 picks a free port. Prints \"listening on URL\" once ready; stops on SIGINT/SIGTERM.\n";

int Usage(const CommandIo& io, const std::string& why) {
  std::fprintf(io.err, "cronledger serve: %s\n%s", why.c_str(), kUsage);
  return kExitUsage;
}

Result<double> PositiveFlag(const Flags& flags, const std::string& name, double def) {
  auto v = flags.Get(name);
  if (!v) return def;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !(d > 0)) {
    return Status::InvalidArgument("--" + name + ": expected a positive number");
  }
  return d;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("listen").Value("token-file").Value("tls-cert").Value("tls-key");
  flags.Value("rate").Value("burst").Value("zoneinfo").Value("refresh");
  Status s = flags.Parse(args);
  if (!s.ok()) return Usage(io, s.message());
  if (!flags.Has("listen") || !flags.Has("token-file")) {
    return Usage(io, "--listen and --token-file are required");
  }
  audit::ServerOptions o;
  o.listen = *flags.Get("listen");
  o.tls_cert = flags.GetOr("tls-cert", "");
  o.tls_key = flags.GetOr("tls-key", "");
  o.api.token_file = *flags.Get("token-file");
  o.api.data_dir = flags.GetOr("data-dir", "./data");
  o.api.zoneinfo_dir = flags.GetOr("zoneinfo", "/usr/share/zoneinfo");
  auto rate = PositiveFlag(flags, "rate", o.api.rate_per_second);
  auto burst = PositiveFlag(flags, "burst", o.api.rate_burst);
  if (!rate.ok()) return Usage(io, rate.status().message());
  if (!burst.ok()) return Usage(io, burst.status().message());
  o.api.rate_per_second = *rate;
  o.api.rate_burst = *burst;
  auto tzdb = model::OpenSystemTimeZoneDb({o.api.zoneinfo_dir, "UTC"});
  if (!tzdb.ok()) return Usage(io, "--zoneinfo: " + tzdb.status().message());
  auto refresh = ParseGoDuration(flags.GetOr("refresh", "1s"));
  if (!refresh.ok() || *refresh < Duration::zero()) {
    return Usage(io, "--refresh: expected a Go duration such as 1s or 500ms");
  }
  // One ledger, or every source's copy in an audit store (the sources it holds at start).
  auto read = audit_store::OpenReadSources(o.api.data_dir, *refresh);
  if (!read.ok()) {
    std::fprintf(io.err, "cronledger serve: %s\n", read.status().ToString().c_str());
    return kExitFailure;
  }
  // Block the stop signals before the server starts its threads, so only sigwait sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto server = read->merged ? audit::Server::Start(read->sources, **tzdb, o)
                             : audit::Server::Start(*read->ledgers.front(), **tzdb, o);
  if (!server.ok()) {
    std::fprintf(io.err, "cronledger serve: %s\n", server.status().ToString().c_str());
    return server.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  std::fprintf(io.out, "listening on %s://%s:%u\n", o.tls_cert.empty() ? "http" : "https",
               host.c_str(), static_cast<unsigned>((*server)->port()));
  std::fflush(io.out);
  int sig = 0;
  sigwait(&stop, &sig);
  (*server)->Stop();
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("serve", "serve the read-only audit HTTP API and timeline page", Run, kUsage);

}  // namespace cronledger::app
