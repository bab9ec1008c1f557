#pragma once

// The `cronledger` subcommand table. Each command lives in its own app/cmd_*.cc and registers
// itself with CL_REGISTER_COMMAND, so adding a command never edits a shared file.

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
};

// Registered commands sorted by name.
const std::vector<Command>& Commands();
bool RegisterCommand(Command command);

}  // namespace cronledger::app

#define CL_REGISTER_COMMAND(name, summary, fn)   \
  static const bool cl_registered_command_##fn = \
      ::cronledger::app::RegisterCommand(::cronledger::app::Command{name, summary, fn})
