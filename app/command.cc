#include "app/command.h"

#include <algorithm>

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

}  // namespace cronledger::app
