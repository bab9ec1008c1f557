#include "bench/schedule/workload.h"

#include <charconv>
#include <fstream>
#include <string_view>

namespace cronledger::bench {
namespace {

Status LineError(const std::string& path, int line_no, std::string_view what) {
  return Status::InvalidArgument(path + ":" + std::to_string(line_no) + ": " + std::string(what));
}

Status ApplyLine(std::string_view key, std::string_view rest, Workload* w) {
  if (key == "chain") {
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), w->chain);
    if (ec != std::errc() || end != rest.data() + rest.size()) {
      return Status::InvalidArgument("bad chain length");
    }
    return Status::Ok();
  }
  if (key == "start") {
    Result<Time> t = ParseRfc3339(rest);
    if (!t.ok()) return t.status();
    w->starts.push_back(*t);
    return Status::Ok();
  }
  if (key == "schedule") {
    w->schedules.emplace_back(rest);
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown key '" + std::string(key) + "'");
}

}  // namespace

Result<Workload> LoadWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError("cannot open " + path);
  Workload w;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty() || line[0] == '#') continue;
    std::string_view view(line);
    size_t space = view.find(' ');
    std::string_view key = view.substr(0, space);
    std::string_view rest = space == std::string_view::npos ? "" : view.substr(space + 1);
    if (Status s = ApplyLine(key, rest, &w); !s.ok()) return LineError(path, line_no, s.ToString());
  }
  if (w.chain <= 0 || w.starts.empty() || w.schedules.empty()) {
    return Status::InvalidArgument(path + ": needs chain > 0, starts and schedules");
  }
  return w;
}

}  // namespace cronledger::bench
