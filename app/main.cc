// cronledger: an event-sourced Kubernetes CronJob controller with a replayable audit ledger.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "app/command.h"
#include "model/json_limits.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: cronledger <command> [flags]\n\ncommands:\n");
  for (const auto& c : cronledger::app::Commands()) {
    std::fprintf(out, "  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  }
  std::fprintf(out,
               "\nRun `cronledger <command> --help` for a command's flags.\n"
               "Every command also takes --log-format text|json and -v N (log verbosity).\n");
}

}  // namespace

int main(int argc, char** argv) {
  using cronledger::app::kExitUsage;
  // Peers (API server, Kafka, HTTP clients) may close sockets under us; a write to a closed socket
  // must be an error return, not a SIGPIPE that kills the controller.
  std::signal(SIGPIPE, SIG_IGN);
  // Before any thread starts, so that every thread can hold an object at the nesting limit.
  if (const auto reserved = cronledger::model::ReserveThreadStacks(); !reserved.ok()) {
    std::fprintf(stderr, "cronledger: warning: %s\n", reserved.message().c_str());
  }
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  const std::string name = std::string(argv[1]) == "--version" ? "version" : argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    // `cronledger help COMMAND` is `cronledger COMMAND --help`.
    if (argc > 2) {
      if (const auto* c = cronledger::app::FindCommand(argv[2])) {
        cronledger::app::PrintCommandUsage(*c, stdout);
        return 0;
      }
      std::fprintf(stderr, "cronledger: unknown command \"%s\"\n\n", argv[2]);
      PrintUsage(stderr);
      return kExitUsage;
    }
    PrintUsage(stdout);
    return 0;
  }
  if (const auto* c = cronledger::app::FindCommand(name)) {
    std::vector<std::string> args(argv + 2, argv + argc);
    return cronledger::app::RunCommand(*c, args, {stdin, stdout, stderr});
  }
  std::fprintf(stderr, "cronledger: unknown command \"%s\"\n\n", name.c_str());
  PrintUsage(stderr);
  return kExitUsage;
}
