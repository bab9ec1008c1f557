#pragma once

// Test code only. What the kill -9 test's simulated cluster keeps on disk so that it survives the
// controller process: an append-only journal of its changes (one line per watch event, written
// with a single write(2) before the API call returns, so a SIGKILL keeps every change the
// controller could have seen; a torn last line is a change that never happened) and the virtual
// clock (replaced atomically with rename(2)).

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "controller/watch_events.h"
#include "model/inputs.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"

namespace cronledger::controller::testing {

class Journal {
 public:
  explicit Journal(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644)) {
    CL_CHECK(fd_ >= 0);
  }
  ~Journal() { ::close(fd_); }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void Append(const model::WatchEvent& ev) {
    const std::string line = R"({"type":")" + std::string(model::WatchEventTypeName(ev.type)) +
                             R"(","object":)" + ev.raw + "}\n";
    CL_CHECK(::write(fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  }

  // The changes in order. A last line without its newline was torn by the kill and is dropped.
  static Result<std::vector<model::WatchEvent>> Read(const std::string& path) {
    std::vector<model::WatchEvent> out;
    std::ifstream in(path, std::ios::binary);
    if (!in) return out;
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t pos = 0;
    for (size_t nl; (nl = data.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(data.substr(pos, nl - pos)));
      if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
        return Status::Corruption("journal: bad line");
      }
      CL_ASSIGN_OR_RETURN(model::WatchEventType type,
                          model::ParseWatchEventType(j["type"].get<std::string>()));
      CL_ASSIGN_OR_RETURN(model::WatchEvent ev, MakeWatchEvent(type, j["object"]));
      out.push_back(std::move(ev));
    }
    return out;
  }

 private:
  int fd_;
};

inline void WriteClock(const std::string& path, Time t) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << t.unix_seconds() << " " << t.nanos() << "\n";
    CL_CHECK(out.good());
  }
  CL_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0);
}

inline std::optional<Time> ReadClock(const std::string& path) {
  std::ifstream in(path);
  int64_t sec = 0;
  int32_t nanos = 0;
  if (!(in >> sec >> nanos)) return std::nullopt;
  return Time::FromUnix(sec, nanos);
}

}  // namespace cronledger::controller::testing
