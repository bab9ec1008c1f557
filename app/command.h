#pragma once

// The `cronledger` subcommand table. Each command lives in its own app/cmd_*.cc and registers
// itself with CL_REGISTER_COMMAND, so adding a command never edits a shared file.

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cronledger::app {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure =
    1;                                // the command ran and found a problem (e.g. verify mismatch)
inline constexpr int kExitUsage = 2;  // bad flags or bad input; nothing was changed

struct CommandIo {
  std::FILE* in;
  std::FILE* out;
  std::FILE* err;
};

// args excludes the program and command names.
using CommandFn = std::function<int(const std::vector<std::string>& args, const CommandIo& io)>;

struct Command {
  std::string name;
  std::string summary;
  CommandFn run;
  // What `cronledger NAME --help` prints; empty: "usage: cronledger NAME [flags]" and the summary.
  std::string usage = {};
};

// Registered commands sorted by name.
const std::vector<Command>& Commands();
bool RegisterCommand(Command command);

// The command named `name`, or nullptr.
const Command* FindCommand(std::string_view name);

// Prints the command's usage text on `out`.
void PrintCommandUsage(const Command& command, std::FILE* out);

// Runs `command`: the one place for what every command shares. The global logging flags
// (--log-format, -v; app/log.h) are taken out of `args` and configure the process log; `--help` or
// `-h` among the flags (before a `--`) prints the usage on io.out and returns kExitOk without
// running the command.
int RunCommand(const Command& command, const std::vector<std::string>& args, const CommandIo& io);

}  // namespace cronledger::app

// CL_REGISTER_COMMAND(name, summary, fn[, usage]).
#define CL_REGISTER_COMMAND(name, summary, fn, ...)                                  \
  static const bool cl_registered_command_##fn = ::cronledger::app::RegisterCommand( \
      ::cronledger::app::Command{name, summary, fn, __VA_ARGS__})
