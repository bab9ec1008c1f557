// --set parsing and its application to a CronJob.

#include "replay/what_if.h"

#include <gtest/gtest.h>

namespace cronledger::replay {
namespace {

TEST(WhatIf, ParsesEverySupportedKey) {
  WhatIf w;
  ASSERT_TRUE(ApplySetting("spec.startingDeadlineSeconds=300", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.concurrencyPolicy=Replace", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.suspend=false", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.schedule=*/5 * * * *", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.timeZone=Europe/Rome", &w).ok());
  ASSERT_TRUE(ApplySetting("controller.noDowntime=true", &w).ok());
  EXPECT_EQ(w.starting_deadline_seconds, std::optional<std::optional<int64_t>>(300));
  EXPECT_EQ(w.concurrency_policy, "Replace");
  EXPECT_EQ(w.suspend, false);
  EXPECT_EQ(w.schedule, "*/5 * * * *");
  EXPECT_EQ(w.time_zone, std::optional<std::optional<std::string>>("Europe/Rome"));
  EXPECT_TRUE(w.no_downtime);
  EXPECT_EQ(w.Describe().size(), 6u);
}

TEST(WhatIf, RejectsUnknownKeysAndBadValues) {
  const char* kBad[] = {"spec.nope=1",
                        "noequals",
                        "spec.startingDeadlineSeconds=-3",
                        "spec.startingDeadlineSeconds=12x",
                        "spec.concurrencyPolicy=Sometimes",
                        "spec.suspend=yes",
                        "spec.schedule=",
                        "controller.noDowntime=1"};
  for (const char* s : kBad) {
    WhatIf w;
    Status st = ApplySetting(s, &w);
    EXPECT_TRUE(st.IsInvalidArgument()) << s;
  }
}

TEST(WhatIf, NullClearsOptionalFields) {
  WhatIf w;
  ASSERT_TRUE(ApplySetting("spec.startingDeadlineSeconds=null", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.timeZone=", &w).ok());
  ASSERT_TRUE(w.starting_deadline_seconds.has_value());
  EXPECT_FALSE(w.starting_deadline_seconds->has_value());
  ASSERT_TRUE(w.time_zone.has_value());
  EXPECT_FALSE(w.time_zone->has_value());
}

TEST(WhatIf, ApplyChangesTypedSpecAndRaw) {
  model::CronJob cj;
  cj.spec.schedule = "* * * * *";
  cj.spec.concurrency_policy = "Forbid";
  cj.spec.starting_deadline_seconds = 10;
  cj.raw = {{"spec", {{"schedule", "* * * * *"}, {"concurrencyPolicy", "Forbid"}}}};
  WhatIf w;
  ASSERT_TRUE(ApplySetting("spec.concurrencyPolicy=Replace", &w).ok());
  ASSERT_TRUE(ApplySetting("spec.startingDeadlineSeconds=null", &w).ok());
  const model::CronJob out = ApplyWhatIf(w, cj);
  EXPECT_EQ(out.spec.concurrency_policy, "Replace");
  EXPECT_FALSE(out.spec.starting_deadline_seconds.has_value());
  EXPECT_EQ(out.raw["spec"]["concurrencyPolicy"], "Replace");
  EXPECT_EQ(out.spec.schedule, "* * * * *");  // untouched
  EXPECT_EQ(cj.spec.concurrency_policy, "Forbid");
}

}  // namespace
}  // namespace cronledger::replay
