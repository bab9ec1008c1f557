// robfig/cron v3.0.1 ParseStandard (parser.go) and Kubernetes' schedule formatting
// (docs/semantics.md §6.5). Error texts are robfig's, byte for byte: they reach users in
// UnparseableSchedule events.
#include <array>
#include <string>
#include <vector>

#include "reconciler/cron_go_text.h"
#include "reconciler/cron_spec.h"
#include "reconciler/job_builder.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {
namespace {

struct Name {
  std::string_view name;
  uint64_t value;
};

struct Bounds {
  uint64_t min;
  uint64_t max;
  const Name* names;  // nullptr when the field has no names
  size_t name_count;
};

constexpr std::array<Name, 12> kMonthNames = {{{"jan", 1},
                                               {"feb", 2},
                                               {"mar", 3},
                                               {"apr", 4},
                                               {"may", 5},
                                               {"jun", 6},
                                               {"jul", 7},
                                               {"aug", 8},
                                               {"sep", 9},
                                               {"oct", 10},
                                               {"nov", 11},
                                               {"dec", 12}}};
constexpr std::array<Name, 7> kDowNames = {
    {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3}, {"thu", 4}, {"fri", 5}, {"sat", 6}}};

constexpr Bounds kMinutes = {0, 59, nullptr, 0};
constexpr Bounds kHours = {0, 23, nullptr, 0};
constexpr Bounds kDom = {1, 31, nullptr, 0};
constexpr Bounds kMonths = {1, 12, kMonthNames.data(), kMonthNames.size()};
constexpr Bounds kDow = {0, 6, kDowNames.data(), kDowNames.size()};

std::string U(uint64_t v) { return std::to_string(v); }

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// robfig mustParseInt: strconv.Atoi, negative numbers refused.
Result<uint64_t> MustParseInt(std::string_view expr) {
  auto n = gotext::Atoi(expr);
  if (!n.ok()) {
    return Status::InvalidArgument("failed to parse int from " + std::string(expr) + ": " +
                                   n.status().message());
  }
  if (*n < 0) {
    return Status::InvalidArgument("negative number (" + std::to_string(*n) +
                                   ") not allowed: " + std::string(expr));
  }
  return static_cast<uint64_t>(*n);
}

// robfig parseIntOrName: names match case-insensitively (strings.ToLower).
Result<uint64_t> ParseIntOrName(std::string_view expr, const Bounds& r) {
  if (r.names != nullptr) {
    std::string lower(expr);
    for (char& ch : lower) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    for (size_t i = 0; i < r.name_count; ++i) {
      if (r.names[i].name == lower) return r.names[i].value;
    }
  }
  return MustParseInt(expr);
}

uint64_t GetBits(uint64_t min, uint64_t max, uint64_t step) {
  uint64_t bits = 0;
  for (uint64_t i = min; i <= max; i += step) bits |= uint64_t{1} << i;
  return bits;
}

// robfig getRange: number | number "-" number, optionally "/" step; "*" and "?" mean the whole
// range and set the star bit unless a step greater than 1 follows. "a/n" means a..max every n.
Result<uint64_t> GetRange(std::string_view expr, const Bounds& r) {
  const std::vector<std::string_view> range_and_step = Split(expr, '/');
  const std::vector<std::string_view> low_and_high = Split(range_and_step[0], '-');
  const bool single_digit = low_and_high.size() == 1;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t step = 1;
  uint64_t extra = 0;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    // robfig ignores anything after "*-": "*-5" is "*".
    start = r.min;
    end = r.max;
    extra = CronFields::kStarBit;
  } else {
    CL_ASSIGN_OR_RETURN(start, ParseIntOrName(low_and_high[0], r));
    switch (low_and_high.size()) {
      case 1:
        end = start;
        break;
      case 2: {
        CL_ASSIGN_OR_RETURN(end, ParseIntOrName(low_and_high[1], r));
        break;
      }
      default:
        return Status::InvalidArgument("too many hyphens: " + std::string(expr));
    }
  }
  switch (range_and_step.size()) {
    case 1:
      break;
    case 2: {
      CL_ASSIGN_OR_RETURN(step, MustParseInt(range_and_step[1]));
      if (single_digit) end = r.max;
      if (step > 1) extra = 0;
      break;
    }
    default:
      return Status::InvalidArgument("too many slashes: " + std::string(expr));
  }
  const std::string e(expr);
  if (start < r.min) {
    return Status::InvalidArgument("beginning of range (" + U(start) + ") below minimum (" +
                                   U(r.min) + "): " + e);
  }
  if (end > r.max) {
    return Status::InvalidArgument("end of range (" + U(end) + ") above maximum (" + U(r.max) +
                                   "): " + e);
  }
  if (start > end) {
    return Status::InvalidArgument("beginning of range (" + U(start) + ") beyond end of range (" +
                                   U(end) + "): " + e);
  }
  if (step == 0) {
    return Status::InvalidArgument("step of range should be a positive number: " + e);
  }
  return GetBits(start, end, step) | extra;
}

// robfig getField: a comma list of ranges; empty elements are skipped (strings.FieldsFunc), so a
// field of "," is valid and matches nothing.
Result<uint64_t> GetField(std::string_view field, const Bounds& r) {
  uint64_t bits = 0;
  for (std::string_view expr : Split(field, ',')) {
    if (expr.empty()) continue;
    CL_ASSIGN_OR_RETURN(uint64_t bit, GetRange(expr, r));
    bits |= bit;
  }
  return bits;
}

uint64_t All(const Bounds& r) { return GetBits(r.min, r.max, 1) | CronFields::kStarBit; }

Result<std::unique_ptr<Schedule>> ParseDescriptor(std::string_view d,
                                                  std::shared_ptr<const model::TimeZone> loc) {
  CronFields f;
  f.second = 1;
  f.minute = 1;
  f.hour = 1;
  f.dom = uint64_t{1} << 1;
  f.month = All(kMonths);
  f.dow = All(kDow);
  if (d == "@yearly" || d == "@annually") {
    f.month = uint64_t{1} << 1;
  } else if (d == "@monthly") {
  } else if (d == "@weekly") {
    f.dom = All(kDom);
    f.dow = 1;
  } else if (d == "@daily" || d == "@midnight") {
    f.dom = All(kDom);
  } else if (d == "@hourly") {
    f.dom = All(kDom);
    f.hour = All(kHours);
  } else if (constexpr std::string_view kEvery = "@every "; d.starts_with(kEvery)) {
    auto duration = ParseGoDuration(d.substr(kEvery.size()));
    if (!duration.ok()) {
      return Status::InvalidArgument("failed to parse duration " + std::string(d) + ": " +
                                     duration.status().message());
    }
    return std::unique_ptr<Schedule>(
        std::make_unique<ConstantDelaySchedule>(*duration, std::move(loc)));
  } else {
    return Status::InvalidArgument("unrecognized descriptor: " + std::string(d));
  }
  return std::unique_ptr<Schedule>(std::make_unique<SpecSchedule>(f, std::move(loc)));
}

std::string FormatFields(const std::vector<std::string_view>& fields) {
  std::string out = "[";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out.append(fields[i]);
  }
  out.push_back(']');
  return out;
}

}  // namespace

Result<std::unique_ptr<Schedule>> ParseStandard(std::string_view spec,
                                                const model::TimeZoneDb& tzdb) {
  if (spec.empty()) return Status::InvalidArgument("empty spec string");
  std::shared_ptr<const model::TimeZone> loc = tzdb.Local();
  if (spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=")) {
    const size_t space = spec.find(' ');
    const size_t eq = spec.find('=');
    if (space == std::string_view::npos) {
      // robfig slices spec[eq+1:-1] and panics; Kubernetes recovers the panic into this error.
      return Status::InvalidArgument(
          "invalid schedule format: runtime error: slice bounds out of range [:-1]");
    }
    const std::string_view name = spec.substr(eq + 1, space - eq - 1);
    auto zone = tzdb.Load(name);
    if (!zone.ok()) {
      return Status::InvalidArgument("provided bad location " + std::string(name) + ": " +
                                     zone.status().message());
    }
    loc = std::move(zone).value();
    spec = gotext::TrimSpace(spec.substr(space));
  }
  if (spec.starts_with("@")) return ParseDescriptor(spec, std::move(loc));

  const std::vector<std::string_view> fields = gotext::Fields(spec);
  if (fields.size() != 5) {
    return Status::InvalidArgument("expected exactly 5 fields, found " +
                                   std::to_string(fields.size()) + ": " + FormatFields(fields));
  }
  CronFields f;
  CL_ASSIGN_OR_RETURN(f.minute, GetField(fields[0], kMinutes));
  CL_ASSIGN_OR_RETURN(f.hour, GetField(fields[1], kHours));
  CL_ASSIGN_OR_RETURN(f.dom, GetField(fields[2], kDom));
  CL_ASSIGN_OR_RETURN(f.month, GetField(fields[3], kMonths));
  CL_ASSIGN_OR_RETURN(f.dow, GetField(fields[4], kDow));
  return std::unique_ptr<Schedule>(std::make_unique<SpecSchedule>(f, std::move(loc)));
}

FormattedSchedule FormatSchedule(std::string_view schedule, const std::optional<std::string>& tz) {
  if (schedule.find("TZ") != std::string_view::npos) return {std::string(schedule), true};
  if (tz) return {"TZ=" + *tz + " " + std::string(schedule), false};
  return {std::string(schedule), false};
}

Status CheckTimeZone(const std::optional<std::string>& tz, const model::TimeZoneDb& tzdb) {
  if (!tz) return Status::Ok();
  auto zone = tzdb.Load(*tz);
  if (zone.ok()) return Status::Ok();
  return Status::InvalidArgument("invalid timeZone: " + GoQuote(*tz) + ": " +
                                 zone.status().message());
}

}  // namespace cronledger::reconciler
