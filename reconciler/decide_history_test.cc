// The decision stream accounts for every fire time exactly once over a long scripted history:
// normal running, an outage, suspend/resume, a Forbid chain with long jobs, a starting deadline
// with a lagging controller, and the America/New_York spring-forward day (2016-03-13). The
// controller is simulated: each pass runs Decide() against an in-memory cluster, and the next pass
// happens at the requeue time or at a watch event (job completion, spec change).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "reconciler/api_emulator.h"
#include "reconciler/decide.h"
#include "reconciler/decide_test_util.h"

namespace cronledger::reconciler {
namespace {

using namespace std::chrono_literals;
using model::ApiOutcome;
using model::ApiVerb;
using model::DecisionAction;
using testing::T;

class Cluster {
 public:
  explicit Cluster(model::CronJob cj) : cj_(std::move(cj)) {}

  model::CronJob& cron_job() { return cj_; }
  Duration job_runtime = 10min;

  // Jobs finish `job_runtime` after they were created; returns the next completion after `now`.
  std::optional<Time> CompleteJobs(Time now) {
    std::optional<Time> next;
    for (auto& [name, job] : jobs_) {
      const Time done = job.metadata.creation_timestamp->Add(job_runtime);
      if (done <= now && !model::IsFinished(job)) {
        job.status.completion_time = done;
        job.status.conditions.push_back({"Complete", "True", model::Json::object()});
      } else if (done > now && (!next || done < *next)) {
        next = done;
      }
    }
    return next;
  }

  std::vector<model::Job> Jobs() const {
    std::vector<model::Job> out;
    for (const auto& [name, job] : jobs_) out.push_back(job);
    return out;
  }

  ApiOutcome Perform(const model::ApiCall& call, Time now) {
    if (call.kind == model::ApiKind::kCronJob) {
      if (call.verb == ApiVerb::kUpdateStatus) {
        auto written = model::DecodeCronJob(call.object);
        EXPECT_TRUE(written.ok());
        cj_.status = written->status;
      }
      return ApiOutcome::Ok(model::EncodeCronJob(cj_));
    }
    auto it = jobs_.find(call.name);
    switch (call.verb) {
      case ApiVerb::kGet:
        if (it == jobs_.end()) return ApiOutcome::Error("NotFound", "not found");
        return ApiOutcome::Ok(model::EncodeJob(it->second));
      case ApiVerb::kCreate: {
        if (it != jobs_.end()) return ApiOutcome::Error("AlreadyExists", "already exists");
        auto job = model::DecodeJob(call.object);
        EXPECT_TRUE(job.ok());
        job->metadata.uid = "uid-" + call.name;
        job->metadata.creation_timestamp = now;  // the API server sets it
        jobs_[call.name] = *job;
        ++created;
        return ApiOutcome::Ok(model::EncodeJob(*job));
      }
      case ApiVerb::kDelete:
        jobs_.erase(call.name);
        return ApiOutcome::Ok(nullptr);
      case ApiVerb::kUpdateStatus:
        break;
    }
    return ApiOutcome::Error("BadRequest", "unexpected");
  }

  int created = 0;

 private:
  model::CronJob cj_;
  std::map<std::string, model::Job> jobs_;
};

struct Script {
  Time start = T("2016-03-12T00:00:00Z");
  Time end = T("2016-03-16T00:00:00Z");
  Time outage_from = T("2016-03-12T06:00:00Z"), outage_to = T("2016-03-12T12:10:00Z");
  Time suspend_from = T("2016-03-12T15:05:00Z"), suspend_to = T("2016-03-12T18:20:00Z");
  Time forbid_from = T("2016-03-13T00:00:00Z"), forbid_to = T("2016-03-13T12:00:00Z");
  Time deadline_from = T("2016-03-14T00:00:00Z"), deadline_to = T("2016-03-14T12:00:00Z");
};

// Applies the spec changes in force at `now`.
void ApplyScript(const Script& s, Time now, Cluster* cluster) {
  auto& spec = cluster->cron_job().spec;
  spec.suspend = now >= s.suspend_from && now < s.suspend_to;
  const bool forbid = now >= s.forbid_from && now < s.forbid_to;
  spec.concurrency_policy = forbid ? "Forbid" : "Allow";
  cluster->job_runtime = forbid ? 75min : 10min;
  const bool deadline = now >= s.deadline_from && now < s.deadline_to;
  spec.starting_deadline_seconds = deadline ? std::optional<int64_t>(60) : std::nullopt;
}

TEST(DecisionAccounting, EveryFireTimeExactlyOnceOverAScriptedHistory) {
  const Script s;
  auto cj = testing::CronJobWith("*/30 * * * *", s.start, std::nullopt);
  cj.spec.time_zone = "America/New_York";
  Cluster cluster(cj);
  model::AccountingState accounting;
  std::vector<model::Decision> decisions;
  const std::vector<Time> script_points = {s.outage_to,   s.suspend_from, s.suspend_to,
                                           s.forbid_from, s.forbid_to,    s.deadline_from,
                                           s.deadline_to, s.end};
  Time now = s.start;
  int passes = 0;
  while (now <= s.end && passes < 5000) {
    ++passes;
    ApplyScript(s, now, &cluster);
    std::optional<Time> next_completion = cluster.CompleteJobs(now);
    SyncInput in;
    in.cron_job = cluster.cron_job();
    in.jobs = cluster.Jobs();
    in.now = now;
    in.tzdb = &testing::Tzdb();
    in.accounting = accounting;
    const SyncResult r =
        RunPass(in, [&](const model::ApiCall& c) { return cluster.Perform(c, now); });
    ASSERT_FALSE(r.error.has_value()) << *r.error;
    accounting = r.accounting;
    decisions.insert(decisions.end(), r.decisions.begin(), r.decisions.end());
    // Next wake-up: requeue (late by 3 minutes while the deadline applies), job completion or a
    // script point; nothing happens during the outage.
    std::optional<Time> wake;
    auto consider = [&](std::optional<Time> t) {
      if (t && *t > now && (!wake || *t < *wake)) wake = t;
    };
    if (r.requeue_after) {
      const bool lagging = now >= s.deadline_from && now < s.deadline_to;
      consider(now.Add(*r.requeue_after + (lagging ? Duration(3min) : Duration(0))));
    }
    consider(next_completion);
    for (Time p : script_points) consider(p);
    if (!wake) break;
    now = *wake;
    if (now >= s.outage_from && now < s.outage_to) now = s.outage_to;
  }
  ASSERT_GT(passes, 100);

  // Every fire time in (creation, accounted_through] has exactly one terminal record.
  auto sched = testing::Parse("TZ=America/New_York */30 * * * *");
  ASSERT_NE(sched, nullptr);
  ASSERT_TRUE(accounting.accounted_through.has_value());
  std::vector<Time> fire_times;
  for (auto t = sched->Next(s.start); t && *t <= *accounting.accounted_through;
       t = sched->Next(*t)) {
    fire_times.push_back(*t);
  }
  ASSERT_GT(fire_times.size(), 180u);
  std::map<Time, int> terminal;
  std::map<std::string, int> reasons;
  std::vector<std::pair<Time, Time>> ranges;
  for (const auto& d : decisions) {
    if (d.action == DecisionAction::kSkipped && d.range_end) {
      ranges.emplace_back(*d.scheduled_time, *d.range_end);
    } else if (d.action == DecisionAction::kSkipped || d.action == DecisionAction::kCreateJob) {
      ASSERT_TRUE(d.scheduled_time.has_value());
      ++terminal[*d.scheduled_time];
      ++reasons[d.action == DecisionAction::kCreateJob ? "createJob" : d.reason];
    }
  }
  const std::set<Time> fire_set(fire_times.begin(), fire_times.end());
  for (const auto& [t, n] : terminal) {
    EXPECT_TRUE(fire_set.count(t)) << "record for a non-fire time " << FormatRfc3339(t);
    EXPECT_EQ(n, 1) << FormatRfc3339(t);
  }
  for (Time t : fire_times) {
    int covered = terminal.count(t) ? terminal[t] : 0;
    for (const auto& [from, to] : ranges) covered += (t >= from && t <= to) ? 1 : 0;
    EXPECT_EQ(covered, 1) << FormatRfc3339(t);
  }
  // Only the latest fire time may still be pending at the end.
  if (accounting.pending_slot) {
    EXPECT_GT(*accounting.pending_slot, *accounting.accounted_through);
  }
  EXPECT_EQ(reasons["createJob"], cluster.created);
  EXPECT_GT(reasons["Superseded"], 5);         // the outage
  EXPECT_GT(reasons["Suspended"], 3);          // the suspension
  EXPECT_GT(reasons["ConcurrencyForbid"], 3);  // the Forbid chain
  EXPECT_GT(reasons["TooLate"], 3);            // the lagging controller with a 60 s deadline
  // The spring-forward day has 46 half-hour slots in New York.
  int dst_day = 0;
  for (Time t : fire_times) {
    dst_day += t >= T("2016-03-13T05:00:00Z") && t < T("2016-03-14T04:00:00Z") ? 1 : 0;
  }
  EXPECT_EQ(dst_day, 46);
}

TEST(DecisionAccounting, LongOutageIsBoundedWithOneRangeRecord) {
  // A per-minute CronJob whose controller was away for 30 days: 43200 missed fire times become at
  // most kMaxIndividualSlots individual records plus one TooManyMissed range record.
  auto cj = testing::CronJobWith("* * * * *", T("2016-01-01T00:00:00Z"), T("2016-01-01T00:00:00Z"));
  SyncInput in;
  in.cron_job = cj;
  in.now = T("2016-01-31T00:00:30Z");
  in.tzdb = &testing::Tzdb();
  EmulatedApi api({}, model::EncodeCronJob(cj));
  const SyncResult r = RunPass(in, [&](const model::ApiCall& c) { return api.Perform(c); });
  int individual = 0;
  int range_records = 0;
  for (const auto& d : r.decisions) {
    if (d.action != DecisionAction::kSkipped) continue;
    if (d.range_end) {
      ++range_records;
      EXPECT_EQ(d.reason, "TooManyMissed");
      EXPECT_EQ(*d.scheduled_time, T("2016-01-01T00:01:00Z"));
    } else {
      ++individual;
    }
  }
  EXPECT_EQ(range_records, 1);
  EXPECT_LE(individual, 100);
  EXPECT_GE(individual, 40);
  EXPECT_EQ(r.accounting.accounted_through, T("2016-01-31T00:00:00Z"));
}

}  // namespace
}  // namespace cronledger::reconciler
