// `cronledger schedule`: the next fire times of a schedule, with robfig/cron v3.0.1 semantics and
// Kubernetes' spec.timeZone handling (docs/design.md §4, docs/semantics.md §6.5 and §9).
//
//   cronledger schedule --schedule SPEC [--time-zone ZONE] --from RFC3339 [--count N]
//                       [-o json|table]
//   cronledger schedule --stdin    (JSON lines {"schedule","timeZone","from","n"}, one answer each)
//
// `-n N` is the frozen spelling of --count (docs/design.md §4); -n means a namespace in the
// commands that have one, so here it is taken only with a number. A --time-zone that does not load
// is refused like the controller refuses it (UnknownTimeZone), even when the schedule carries its
// own TZ=. An invalid schedule or zone exits 2 with {"error": ...} on stdout (json) or a message on
// stderr. In --stdin mode every input line gets exactly one output line, in order, and the exit
// code is 0 unless the flags themselves are wrong.
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "model/json.h"
#include "model/time.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::app {
namespace {

using model::Json;

constexpr int64_t kDefaultCount = 5;
constexpr int64_t kMaxCount = 10000;
// Parsed schedules kept for --stdin; bulk checks repeat the same few schedules many times.
constexpr size_t kMaxCachedSchedules = 4096;

struct Request {
  std::string schedule;
  std::optional<std::string> time_zone;
  Time from;
  int64_t count = kDefaultCount;
};

struct Answer {
  std::vector<Time> next;
  const model::TimeZone* zone = nullptr;  // the zone the schedule runs in
};

class Engine {
 public:
  explicit Engine(const model::TimeZoneDb& db) : db_(db) {}

  // Kubernetes formatting (a schedule containing "TZ" ignores timeZone), then ParseStandard, then
  // chained Next until `count` results or robfig's five-year give-up.
  Result<Answer> Run(const Request& req) {
    CL_RETURN_IF_ERROR(reconciler::CheckTimeZone(req.time_zone, db_));
    const reconciler::FormattedSchedule text =
        reconciler::FormatSchedule(req.schedule, req.time_zone);
    auto it = cache_.find(text.text);
    if (it == cache_.end()) {
      CL_ASSIGN_OR_RETURN(auto parsed, reconciler::ParseStandard(text.text, db_));
      if (cache_.size() >= kMaxCachedSchedules) cache_.clear();
      it = cache_.emplace(text.text, std::move(parsed)).first;
    }
    const reconciler::Schedule& s = *it->second;
    Answer answer;
    answer.zone = &s.zone();
    answer.next.reserve(static_cast<size_t>(req.count));
    Time t = req.from;
    for (int64_t i = 0; i < req.count; ++i) {
      const std::optional<Time> next = s.Next(t);
      if (!next) break;
      answer.next.push_back(*next);
      t = *next;
    }
    return answer;
  }

 private:
  const model::TimeZoneDb& db_;
  std::unordered_map<std::string, std::unique_ptr<reconciler::Schedule>> cache_;
};

Result<int64_t> ValidateCount(int64_t n) {
  if (n < 0 || n > kMaxCount) {
    return Status::InvalidArgument("n must be between 0 and " + std::to_string(kMaxCount) +
                                   ", got " + std::to_string(n));
  }
  return n;
}

Result<int64_t> ParseCount(const std::string& text) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    return Status::InvalidArgument("n must be an integer, got \"" + text + "\"");
  }
  return ValidateCount(n);
}

std::string NextJson(const Answer& a) {
  std::string out = "{\"next\":[";
  for (size_t i = 0; i < a.next.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    out += FormatRfc3339(a.next[i]);
    out.push_back('"');
  }
  out += "]}";
  return out;
}

std::string ErrorJson(const Status& s) { return model::DumpJson(Json{{"error", s.message()}}); }

Result<Request> DecodeRequest(std::string_view line) {
  CL_ASSIGN_OR_RETURN(Json j, model::ParseJson(line));
  if (!j.is_object()) return Status::InvalidArgument("input line must be a JSON object");
  Request req;
  CL_ASSIGN_OR_RETURN(auto schedule, model::OptString(j, "schedule", "schedule"));
  if (!schedule) return Status::InvalidArgument("schedule: required string");
  req.schedule = *schedule;
  CL_ASSIGN_OR_RETURN(req.time_zone, model::OptString(j, "timeZone", "timeZone"));
  CL_ASSIGN_OR_RETURN(auto from, model::OptString(j, "from", "from"));
  if (!from) return Status::InvalidArgument("from: required RFC 3339 time");
  CL_ASSIGN_OR_RETURN(req.from, ParseRfc3339(*from));
  CL_ASSIGN_OR_RETURN(auto n, model::OptInt(j, "n", "n"));
  if (n) {
    CL_ASSIGN_OR_RETURN(req.count, ValidateCount(*n));
  }
  return req;
}

int RunStdin(Engine* engine, const CommandIo& io) {
  std::vector<char> out_buf(1 << 16);
  std::setvbuf(io.out, out_buf.data(), _IOFBF, out_buf.size());
  char* line = nullptr;
  size_t cap = 0;
  ssize_t len = 0;
  std::string out;
  while ((len = ::getline(&line, &cap, io.in)) >= 0) {
    std::string_view text(line, static_cast<size_t>(len));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    auto req = DecodeRequest(text);
    if (!req.ok()) {
      out = ErrorJson(req.status());
    } else {
      auto answer = engine->Run(*req);
      out = answer.ok() ? NextJson(*answer) : ErrorJson(answer.status());
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), io.out);
  }
  std::free(line);
  std::fflush(io.out);
  std::setvbuf(io.out, nullptr, _IOFBF, BUFSIZ);
  return kExitOk;
}

void PrintTable(const Request& req, const Answer& a, std::FILE* out) {
  const std::string& zone = a.zone->name();
  std::fprintf(out, "%-4s %-22s %s\n", "#", "UTC", zone.c_str());
  for (size_t i = 0; i < a.next.size(); ++i) {
    const Time t = a.next[i];
    std::fprintf(out, "%-4zu %-22s %s\n", i + 1, FormatRfc3339(t).c_str(),
                 FormatRfc3339(t, a.zone->OffsetAt(t.unix_seconds())).c_str());
  }
  if (static_cast<int64_t>(a.next.size()) < req.count) {
    std::fprintf(out, "(no further activation within robfig's five-year search window)\n");
  }
}

constexpr const char* kUsage =
    "usage: cronledger schedule --schedule SPEC [--time-zone ZONE] --from RFC3339 [--count N]\n"
    "                           [-o json|table]\n"
    "       cronledger schedule --stdin   (JSON lines {\"schedule\", \"timeZone\", \"from\", "
    "\"n\"})\n"
    "  --count N             how many fire times (default 5); -n N is the same (kept for scripts)\n"
    "  --zoneinfo-dir DIR    time zone database (default /usr/share/zoneinfo)\n"
    "  --local-zone ZONE     Go's Local, for schedules without a zone (default UTC)\n";

// --count N, or its older spelling -n N (a number only: -n names a namespace elsewhere).
Result<std::optional<int64_t>> CountFlag(const Flags& flags) {
  const std::optional<std::string> count = flags.Get("count");
  const std::optional<std::string> n = flags.Get("n");
  if (count && n) return Status::InvalidArgument("--count and -n are the same flag; give one");
  if (!count && !n) return std::optional<int64_t>();
  CL_ASSIGN_OR_RETURN(int64_t v, ParseCount(count ? *count : *n));
  return std::optional<int64_t>(v);
}

int RunSchedule(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("schedule").Value("time-zone").Value("from").Value("count").Value("n", "n");
  flags.Value("output", "o").Value("zoneinfo-dir").Value("local-zone").Switch("stdin");
  const bool json = [&] {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if ((args[i] == "-o" || args[i] == "--output") && args[i + 1] == "json") return true;
    }
    for (const auto& a : args) {
      if (a == "-o=json" || a == "--output=json") return true;
    }
    return false;
  }();
  auto usage = [&](const Status& s) {
    if (json) {
      std::fprintf(io.out, "%s\n", ErrorJson(s).c_str());
    } else {
      std::fprintf(io.err, "cronledger schedule: %s\n", s.message().c_str());
    }
    return kExitUsage;
  };
  if (Status s = flags.Parse(args); !s.ok()) return usage(s);
  const std::string output = flags.GetOr("output", "table");
  if (output != "json" && output != "table") {
    return usage(Status::InvalidArgument("--output must be json or table, got " + output));
  }
  if (!flags.positionals().empty()) {
    return usage(Status::InvalidArgument("unexpected argument " + flags.positionals()[0]));
  }
  model::SystemTimeZoneDbOptions options;
  options.zoneinfo_dir = flags.GetOr("zoneinfo-dir", options.zoneinfo_dir);
  options.local_zone = flags.GetOr("local-zone", options.local_zone);
  auto db = model::OpenSystemTimeZoneDb(options);
  if (!db.ok()) return usage(db.status());
  Engine engine(**db);
  if (flags.Has("stdin")) {
    if (flags.Has("schedule") || flags.Has("from") || flags.Has("time-zone") || flags.Has("n") ||
        flags.Has("count")) {
      return usage(Status::InvalidArgument("--stdin takes its requests from standard input only"));
    }
    return RunStdin(&engine, io);
  }

  Request req;
  if (!flags.Has("schedule")) return usage(Status::InvalidArgument("--schedule is required"));
  if (!flags.Has("from")) return usage(Status::InvalidArgument("--from is required"));
  req.schedule = *flags.Get("schedule");
  req.time_zone = flags.Get("time-zone");
  auto from = ParseRfc3339(*flags.Get("from"));
  if (!from.ok()) return usage(from.status());
  req.from = *from;
  auto count = CountFlag(flags);
  if (!count.ok()) return usage(count.status());
  req.count = count->value_or(kDefaultCount);
  auto answer = engine.Run(req);
  if (!answer.ok()) return usage(answer.status());
  if (output == "json") {
    std::fprintf(io.out, "%s\n", NextJson(*answer).c_str());
  } else {
    PrintTable(req, *answer, io.out);
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("schedule", "next fire times of a cron schedule (robfig/cron v3 semantics)",
                    RunSchedule, kUsage);

}  // namespace cronledger::app
