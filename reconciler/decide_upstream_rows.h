#pragma once

// Every row of upstream TestControllerV2SyncCronJob (pkg/controller/cronjob/
// cronjob_controllerv2_test.go, newest text), as data. Field meanings are upstream's; `events` and
// `job` are cronledger's additions (the exact event reasons, and the name of the created Job).
// upstream's expectActive is deliberately not ported (never checked by upstream, docs/semantics.md
// §12).

#include <optional>

#include "model/time.h"

namespace cronledger::reconciler::upstream {

using namespace std::chrono_literals;

inline Time At(int64_t unix) { return Time::FromUnix(unix); }
// upstream's fixed instants (2016-05-19 unless noted).
inline const Time kJustBeforeThePriorHour = At(1463648340);  // 08:59:00
inline const Time kJustAfterThePriorHour = At(1463648460);   // 09:01:00
inline const Time kJustBeforeTheHour = At(1463651940);       // 09:59:00
inline const Time kTopOfTheHour = At(1463652000);            // 10:00:00
inline const Time kJustAfterTheHour = At(1463652060);        // 10:01:00
inline const Time kJustBeforeTheNextHour = At(1463655540);   // 10:59:00
inline const Time kWeekAfterTheHour = At(1464256800);        // 2016-05-26 10:00:00

inline constexpr int64_t kShortDead = 10;
inline constexpr int64_t kMediumDead = 2 * 60 * 60;
inline constexpr int64_t kLongDead = 1000000;
inline constexpr const char* kOnTheHour = "0 * * * ?";
inline constexpr const char* kEveryHour = "@every 1h";
inline constexpr const char* kErrorSchedule = "obvious error schedule";
inline constexpr Duration kDelta = 100ms;

struct SyncRow {
  const char* name;
  const char* policy = "Allow";
  bool suspend = false;
  const char* schedule = kOnTheHour;
  const char* time_zone = nullptr;
  std::optional<int64_t> deadline = std::nullopt;  // upstream's noDead = absent
  std::optional<int64_t> successful_jobs_history_limit = std::nullopt;
  bool ran_previously = false;
  bool still_active = false;
  std::optional<Time> cronjob_creation_time = std::nullopt;
  Time job_creation_time = kJustAfterThePriorHour;
  std::optional<Time> last_schedule_time = std::nullopt;
  Time now = Time();
  const char* job_create_error = nullptr;  // a status reason, or NamespaceTerminating
  const char* job_get_error = nullptr;
  bool expect_create = false;
  bool expect_delete = false;
  bool expect_completed = false;
  int expected_warnings = 0;
  bool expect_err = false;
  bool expect_requeue_after = false;
  Duration expected_requeue_duration{};
  bool expect_update_status = false;
  bool job_still_not_found_in_lister = false;
  bool job_present_in_cj_active_status = false;
  const char* events = "";    // cronledger: the event reasons, in order
  const char* job = nullptr;  // cronledger: the created Job's name
};

// Defined in decide_upstream_rows_test.cc.
extern const SyncRow kSyncRows[];
extern const size_t kSyncRowCount;

}  // namespace cronledger::reconciler::upstream
