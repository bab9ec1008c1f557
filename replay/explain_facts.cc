#include "replay/explain_facts.h"

#include "model/json.h"
#include "reconciler/invalid_object.h"

namespace cronledger::replay::internal {

void FactCollector::OnInput(const store::LogRecord& rec) {
  if (const auto* t = std::get_if<model::Tick>(&rec.input)) {
    all_ticks.push_back({t->now, rec.seq});
    if (t->namespace_ == ns_ && t->name == name_) own_ticks.push_back({t->now, rec.seq});
    return;
  }
  const auto* ev = std::get_if<model::WatchEvent>(&rec.input);
  if (ev == nullptr || ev->namespace_ != ns_ || ev->type == model::WatchEventType::kBookmark)
    return;
  const bool deleted = ev->type == model::WatchEventType::kDeleted;
  auto j = model::ParseJson(ev->raw);
  if (ev->kind == model::ObjectKind::kCronJob && ev->name == name_) {
    CronJobVersion v{rec.seq, deleted, ev->resource_version, ev->uid, {}, std::nullopt, ""};
    auto cj = j.ok() ? model::DecodeCronJob(*j) : Result<model::CronJob>(j.status());
    if (cj.ok()) {
      v.spec = cj->spec;
      v.created = cj->metadata.creation_timestamp;
    } else if (!deleted && !rec.raw_pruned) {
      v.error = reconciler::StoredCronJobError(cj.status());
    }
    cron_job.push_back(std::move(v));  // an undecodable version still marks its seq
  } else if (ev->kind == model::ObjectKind::kJob && ev->owner_name == name_) {
    JobVersion v{rec.seq, deleted, std::nullopt, std::nullopt, std::nullopt};
    auto job = j.ok() ? model::DecodeJob(*j) : Result<model::Job>(j.status());
    if (job.ok()) {
      v.created = job->metadata.creation_timestamp;
      v.finished = model::FinishedCondition(*job);
      v.completion = job->status.completion_time;
    }
    jobs[ev->name].push_back(std::move(v));
  }
}

void FactCollector::OnPass(const PassContext& pass) {
  PassFacts f;
  f.summary = pass.summary;
  if (pass.view.cron_job) {
    for (const auto& ref : pass.view.cron_job->status.active) f.active.push_back(ref.name);
    f.resource_version = pass.view.cron_job->metadata.resource_version;
    f.spec = pass.view.cron_job->spec;
  }
  f.decisions = pass.result.decisions;
  passes.push_back(std::move(f));
}

}  // namespace cronledger::replay::internal
