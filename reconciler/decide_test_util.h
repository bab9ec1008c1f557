#pragma once

// Shared helpers for the reconciler tests (header-only, test code only).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/objects.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler::testing {

inline Time T(const char* rfc3339) {
  auto t = ParseRfc3339(rfc3339);
  EXPECT_TRUE(t.ok()) << rfc3339;
  return t.ok() ? *t : Time();
}

// The system tz database with Local = UTC, like upstream's test environment.
inline const model::TimeZoneDb& Tzdb() {
  static const std::unique_ptr<model::TimeZoneDb> db = [] {
    auto opened = model::OpenSystemTimeZoneDb({});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }();
  return *db;
}

inline std::unique_ptr<Schedule> Parse(const std::string& spec) {
  auto s = ParseStandard(spec, Tzdb());
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// upstream's topOfTheHour() and deltaTimeAfterTopOfTheHour().
inline Time Top() { return T("2016-05-19T10:00:00Z"); }
inline Time AfterTop(Duration d) { return Top().Add(d); }

inline model::CronJob CronJobWith(const std::string& schedule, std::optional<Time> created,
                                  std::optional<Time> last_schedule) {
  model::CronJob cj;
  cj.api_version = "batch/v1";
  cj.kind = "CronJob";
  cj.metadata.name = "mycronjob";
  cj.metadata.namespace_ = "snazzycats";
  cj.metadata.uid = "1a2b3c";
  cj.metadata.creation_timestamp = created;
  cj.spec.schedule = schedule;
  cj.spec.concurrency_policy = "Allow";
  cj.status.last_schedule_time = last_schedule;
  return cj;
}

}  // namespace cronledger::reconciler::testing
