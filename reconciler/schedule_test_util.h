#pragma once

// Shared helpers for the schedule engine's unit tests.

#include <string>

#include "model/time.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler::testing {

// The system tz database with Local = UTC (cronledger's default), opened once.
inline const model::TimeZoneDb& Db() {
  static const model::TimeZoneDb* db = [] {
    auto r = model::OpenSystemTimeZoneDb({});
    CL_CHECK(r.ok());
    return std::move(r).value().release();
  }();
  return *db;
}

// Next(from) as RFC 3339 UTC, "none" for robfig's zero time, or "error: <message>".
inline std::string NextOf(const std::string& spec, const std::string& from) {
  auto s = ParseStandard(spec, Db());
  if (!s.ok()) return "error: " + s.status().message();
  auto t = ParseRfc3339(from);
  CL_CHECK(t.ok());
  auto n = (*s)->Next(*t);
  return n ? FormatRfc3339(*n) : "none";
}

}  // namespace cronledger::reconciler::testing
