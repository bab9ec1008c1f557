#pragma once

// Shadow-mode divergences added to a store that `cronledger simulate deploy/samples` recorded
// (the simulator runs the controller, not the shadow auditor), committed as the auditor commits
// them (audit::DivergenceRecord, stamped by the ledger at their time), within the report's default
// window:
//   platform/cache-warmer  MissedRun of the fire time two hours before the horizon (rounded down to
//                          five minutes), recorded 61 s after it; its LateRun 190 s late;
//   platform/heartbeat     an UnexpectedJob an hour before the horizon;
//   finance/gone           an UnexpectedJob of a CronJob the store does not hold.
// The store must not be open elsewhere.

#include <gtest/gtest.h>

#include <string>

#include "audit/adherence.h"
#include "audit/divergences.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::audit::testing {

struct AddedDivergences {
  Time missed_fire_time;  // cache-warmer's
  Time unexpected_at;     // heartbeat's
};

inline AddedDivergences AddSampleDivergences(const std::string& data_dir) {
  store::testing::ManualClock clock(Time::FromUnix(0));  // stamps each record at its time
  store::LedgerOptions o;
  o.path = data_dir;
  o.create_if_missing = false;
  o.clock = &clock;
  auto ledger = store::Ledger::Open(o);
  EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
  if (!ledger.ok()) return {};
  auto horizon = LedgerHorizon(**ledger);
  EXPECT_TRUE(horizon.ok() && horizon->has_value());
  if (!horizon.ok() || !horizon->has_value()) return {};
  const int64_t h = (*horizon)->unix_seconds();
  AddedDivergences added{Time::FromUnix((h - 7200) / 300 * 300), Time::FromUnix(h - 3600)};
  const Time fire = added.missed_fire_time;
  const std::string job = "cache-warmer-" + std::to_string(fire.unix_seconds() / 60);
  auto commit = [&](model::ActionOutcome record) {
    clock.Set(record.time);
    store::UnitOfWork u;
    u.inputs.push_back(std::move(record));
    auto r = (*ledger)->Commit(std::move(u));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  };
  commit(DivergenceRecord(
      fire.AddSeconds(61), kMissedRun, "platform", "cache-warmer", job,
      {{"scheduledTime", FormatRfc3339(fire)}, {"expectedSince", FormatRfc3339(fire)}}));
  commit(DivergenceRecord(fire.AddSeconds(200), kLateRun, "platform", "cache-warmer", job,
                          {{"scheduledTime", FormatRfc3339(fire)},
                           {"observedAt", FormatRfc3339(fire.AddSeconds(200))},
                           {"skewSeconds", 190}}));
  commit(DivergenceRecord(added.unexpected_at, kUnexpectedJob, "platform", "heartbeat",
                          "heartbeat-extra",
                          {{"createdAt", FormatRfc3339(added.unexpected_at)},
                           {"observedAt", FormatRfc3339(added.unexpected_at)}}));
  commit(DivergenceRecord(added.unexpected_at, kUnexpectedJob, "finance", "gone", "gone-1", {}));
  return added;
}

}  // namespace cronledger::audit::testing
