// Fuzz target: reconciler::ParseStandard + chains of Schedule::Next from fuzzer-chosen start times.
// Input (text, so that seeds are readable):
//   line 1:        the schedule spec
//   lines 2..5:    start times, each RFC 3339 ("2024-03-10T06:30:00Z") or integer unix seconds
//                  (clamped to years 0001-9999, the range the Kubernetes API can express);
//                  no start line means 2024-01-01T00:00:00Z
// From each start, up to kChain chained Next calls (each result is the next input). The work is
// bounded (at most 4 x kChain Next calls per input); a Next that does not return is a libFuzzer
// timeout (fuzz/run.sh passes -timeout). Invariants:
//   - every result is strictly after its input;
//   - Next is deterministic (the same input gives the same result);
//   - except for `@every`, a result is less than six years after its input (robfig gives up when
//     the search passes the input's year + 5, docs/semantics.md §9).

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "model/time.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace {

using cronledger::Time;

constexpr int kChain = 16;
constexpr size_t kMaxStarts = 4;
constexpr int64_t kMinSeconds = -62135596800;        // 0001-01-01T00:00:00Z
constexpr int64_t kMaxSeconds = 253402300799;        // 9999-12-31T23:59:59Z
constexpr int64_t kHorizonSeconds = 2200LL * 86400;  // > 6 years + a day of zone offset

const cronledger::model::TimeZoneDb& Db() {
  static const auto* db = [] {
    auto opened = cronledger::model::OpenSystemTimeZoneDb({});
    FUZZ_CHECK(opened.ok(), "cannot open the tz database: %s", opened.status().ToString().c_str());
    return std::move(*opened).release();
  }();
  return *db;
}

std::optional<Time> ParseStart(std::string_view line) {
  if (cronledger::Result<Time> t = cronledger::ParseRfc3339(line); t.ok()) return *t;
  int64_t secs = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), secs);
  if (ec == std::errc::result_out_of_range)
    secs = line.starts_with('-') ? kMinSeconds : kMaxSeconds;
  else if (ec != std::errc() || end == line.data())
    return std::nullopt;
  return Time::FromUnix(std::clamp(secs, kMinSeconds, kMaxSeconds));
}

// Splits the input into the spec (first line) and up to kMaxStarts start times.
std::string_view SplitInput(std::string_view text, std::vector<Time>* starts) {
  size_t nl = text.find('\n');
  std::string_view spec = text.substr(0, nl);
  while (nl != std::string_view::npos && starts->size() < kMaxStarts) {
    text.remove_prefix(nl + 1);
    nl = text.find('\n');
    if (std::optional<Time> t = ParseStart(text.substr(0, nl))) starts->push_back(*t);
  }
  if (starts->empty()) starts->push_back(Time::FromUnix(1704067200));  // 2024-01-01T00:00:00Z
  return spec;
}

void Chain(const cronledger::reconciler::Schedule& schedule, Time t, bool bounded_horizon) {
  for (int i = 0; i < kChain; ++i) {
    const std::optional<Time> next = schedule.Next(t);
    const std::optional<Time> again = schedule.Next(t);
    FUZZ_CHECK(next == again, "Next(%lld.%09d) is not deterministic",
               static_cast<long long>(t.unix_seconds()), t.nanos());
    if (!next) return;
    FUZZ_CHECK(*next > t, "Next(%lld.%09d) = %lld.%09d is not after its input",
               static_cast<long long>(t.unix_seconds()), t.nanos(),
               static_cast<long long>(next->unix_seconds()), next->nanos());
    FUZZ_CHECK(!bounded_horizon || next->unix_seconds() - t.unix_seconds() < kHorizonSeconds,
               "Next(%lld) = %lld is beyond robfig's five-year search",
               static_cast<long long>(t.unix_seconds()),
               static_cast<long long>(next->unix_seconds()));
    t = *next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<Time> starts;
  const std::string_view spec =
      SplitInput(std::string_view(reinterpret_cast<const char*>(data), size), &starts);
  auto parsed = cronledger::reconciler::ParseStandard(spec, Db());
  if (!parsed.ok()) return 0;
  // Only ConstantDelaySchedule (@every) may legitimately land more than five years ahead.
  const bool bounded_horizon = spec.find("@every") == std::string_view::npos;
  for (const Time& start : starts) Chain(**parsed, start, bounded_horizon);
  return 0;
}
