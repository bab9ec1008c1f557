#include "app/command.h"

#include <algorithm>

#include "app/log.h"

namespace cronledger::app {
namespace {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

}  // namespace

const std::vector<Command>& Commands() { return Registry(); }

bool RegisterCommand(Command command) {
  auto& all = Registry();
  auto pos = std::lower_bound(all.begin(), all.end(), command.name,
                              [](const Command& c, const std::string& n) { return c.name < n; });
  all.insert(pos, std::move(command));
  return true;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Registry()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void PrintCommandUsage(const Command& command, std::FILE* out) {
  if (command.usage.empty()) {
    std::fprintf(out, "usage: cronledger %s [flags]\n%s\n", command.name.c_str(),
                 command.summary.c_str());
  } else {
    std::fprintf(out, "%s", command.usage.c_str());
  }
}

int RunCommand(const Command& command, const std::vector<std::string>& all_args,
               const CommandIo& io) {
  LogOptions log_options;
  Result<std::vector<std::string>> args = TakeLogFlags(all_args, &log_options);
  if (!args.ok()) {
    std::fprintf(io.err, "cronledger %s: %s\n", command.name.c_str(),
                 args.status().message().c_str());
    return kExitUsage;
  }
  ConfigureLogging(log_options);
  for (const std::string& arg : *args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") {
      PrintCommandUsage(command, io.out);
      return kExitOk;
    }
  }
  return command.run(*args, io);
}

}  // namespace cronledger::app
