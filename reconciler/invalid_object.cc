#include "reconciler/invalid_object.h"

namespace cronledger::reconciler {

namespace {
constexpr std::string_view kStored = "stored CronJob";
}  // namespace

std::string StoredCronJobError(const Status& error) { return error.WithContext(kStored).message(); }

std::string StoredJobError(std::string_view name, const Status& error) {
  return error.WithContext("stored Job " + std::string(name)).message();
}

SyncResult DecideInvalidCronJob(const InvalidCronJob& cron_job, Time now,
                                const model::AccountingState& before) {
  SyncResult out;
  out.accounting = before;
  // One record per stored version: the key names the input the bytes came from.
  const std::string key = std::string(kInvalidObject) + "|" + std::to_string(cron_job.source_seq);
  if (out.accounting.blocked_key != key) {
    model::Decision d;
    d.time = now;
    d.cron_job = cron_job.ref;
    d.action = model::DecisionAction::kSkipped;
    d.reason = std::string(kInvalidObject);
    d.message = cron_job.message;
    out.decisions.push_back(std::move(d));
    out.accounting.blocked_key = key;
  }
  out.accounting.blocked_reason = std::string(kInvalidObject);
  out.accounting.blocked_until = now;
  return out;
}

}  // namespace cronledger::reconciler
