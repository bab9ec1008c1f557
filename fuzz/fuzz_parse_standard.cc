// Fuzz target: reconciler::ParseStandard (robfig/cron v3.0.1 semantics) on arbitrary bytes.
// Input: `SCHEDULE` or `SCHEDULE\nTIMEZONE`; with a time zone the text goes through
// reconciler::FormatSchedule first, as the controller does (docs/semantics.md §6.5). Nothing may
// crash, trip a sanitizer or abort: every input either parses or yields an error Status.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace {

const cronledger::model::TimeZoneDb& Db() {
  static const auto* db = [] {
    auto opened = cronledger::model::OpenSystemTimeZoneDb({});
    FUZZ_CHECK(opened.ok(), "cannot open the tz database: %s", opened.status().ToString().c_str());
    return std::move(*opened).release();
  }();
  return *db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using cronledger::reconciler::FormatSchedule;
  using cronledger::reconciler::ParseStandard;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string spec(text);
  if (size_t nl = text.find('\n'); nl != std::string_view::npos) {
    const std::string_view schedule = text.substr(0, nl);
    const std::optional<std::string> tz(std::string(text.substr(nl + 1)));
    cronledger::reconciler::FormattedSchedule formatted = FormatSchedule(schedule, tz);
    // docs/semantics.md §6.5: a schedule containing "TZ" is used verbatim and spec.timeZone is
    // ignored.
    const bool has_tz = schedule.find("TZ") != std::string_view::npos;
    FUZZ_CHECK(formatted.contains_tz == has_tz && (!has_tz || formatted.text == schedule),
               "FormatSchedule(\"%.*s\") contains_tz=%d text=\"%s\"",
               static_cast<int>(schedule.size()), schedule.data(), formatted.contains_tz,
               formatted.text.c_str());
    spec = std::move(formatted.text);
  }
  auto parsed = ParseStandard(spec, Db());
  if (parsed.ok()) {
    (void)(*parsed)->zone().name();
  } else {
    FUZZ_CHECK(!parsed.status().message().empty(), "ParseStandard error without a message");
  }
  return 0;
}
