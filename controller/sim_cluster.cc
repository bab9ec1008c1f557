#include "controller/sim_cluster.h"

#include <utility>

#include "controller/sim_objects.h"

namespace cronledger::controller {
namespace {

using model::ApiKind;
using model::ApiOutcome;
using model::ApiVerb;
using model::Json;
using model::WatchEventType;

std::string Key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k.append(ns).push_back('/');
  k.append(name);
  return k;
}

// The defaults the API server applies to a CronJob (batch/v1 defaulting, and the same defaults
// in the cronjobs.cronledger.io CRD schema, deploy/kubernetes/crd/cronjobs.cronledger.io.yaml).
// Without them history cleanup would be off (docs/semantics.md §5) and Jobs would pile up.
void ApplyDefaults(Json* cron_job) {
  Json& spec = (*cron_job)["spec"];
  if (!spec.is_object()) return;
  const std::pair<const char*, Json> defaults[] = {{"concurrencyPolicy", "Allow"},
                                                   {"suspend", false},
                                                   {"successfulJobsHistoryLimit", 3},
                                                   {"failedJobsHistoryLimit", 1}};
  for (const auto& [key, value] : defaults) {
    if (!spec.contains(key) || spec[key].is_null()) spec[key] = value;
  }
}

Time Later(Time t, Duration d) { return t.Add(d); }

// Parses JSON the cluster itself wrote; failure is a bug in the cluster, not untrusted input.
Json ParseOwn(const std::string& raw) {
  auto j = model::ParseJson(raw);
  CL_CHECK(j.ok());
  return std::move(j).value();
}

}  // namespace

SimCluster::SimCluster(SimClusterOptions options, const WallClock& wall)
    : options_(std::move(options)), wall_(wall) {}

SimCluster::~SimCluster() = default;

void SimCluster::SetOnChange(std::function<void()> fn) { on_change_ = std::move(fn); }

void SimCluster::NotifyChange() {
  if (on_change_) on_change_();
}

std::string SimCluster::NextResourceVersionLocked() { return std::to_string(++resource_version_); }

Status SimCluster::ApplyCronJob(const model::CronJob& cron_job) {
  if (cron_job.metadata.name.empty()) {
    return Status::InvalidArgument("CronJob without metadata.name");
  }
  {
    std::lock_guard lock(mu_);
    const Time now = wall_.Now();
    AdvanceLocked(now);
    const std::string ns =
        cron_job.metadata.namespace_.empty() ? "default" : cron_job.metadata.namespace_;
    const std::string key = Key(ns, cron_job.metadata.name);
    Json object = model::EncodeCronJob(cron_job);
    object["metadata"]["namespace"] = ns;
    ApplyDefaults(&object);
    auto it = cron_jobs_.find(key);
    const bool exists = it != cron_jobs_.end();
    if (exists) {
      // kubectl apply changes spec and metadata; the server keeps identity and status.
      const Json old = ParseOwn(it->second.raw);
      object["metadata"]["uid"] = old["metadata"]["uid"];
      object["metadata"]["creationTimestamp"] = old["metadata"]["creationTimestamp"];
      if (old.contains("status")) {
        object["status"] = old["status"];
      } else {
        object.erase("status");
      }
    } else {
      if (cron_job.metadata.uid.empty()) {
        object["metadata"]["uid"] = FormatUid(SimHash(options_.seed, "cronjob-hi", ns, key),
                                              SimHash(options_.seed, "cronjob-lo", ns, key));
      }
      // The API server sets creationTimestamp itself; a manifest's value is ignored.
      object["metadata"]["creationTimestamp"] = FormatRfc3339(now);
    }
    CronJobState& state = cron_jobs_[key];
    state.api_version = cron_job.api_version.empty() ? "batch/v1" : cron_job.api_version;
    state.namespace_ = ns;
    state.name = cron_job.metadata.name;
    state.uid = object["metadata"]["uid"].get<std::string>();
    state.resource_version = NextResourceVersionLocked();
    sim::SetResourceVersion(&object, state.resource_version);
    state.raw = model::DumpJson(object);
    EmitCronJobLocked(exists ? WatchEventType::kModified : WatchEventType::kAdded, state, now);
  }
  NotifyChange();
  return Status::Ok();
}

Status SimCluster::DeleteCronJob(std::string_view ns, std::string_view name) {
  {
    std::lock_guard lock(mu_);
    const Time now = wall_.Now();
    AdvanceLocked(now);
    auto it = cron_jobs_.find(Key(ns, name));
    if (it == cron_jobs_.end()) {
      return Status::NotFound(sim::ErrorMessage(model::api_reason::kNotFound,
                                                sim::ResourceName(ApiKind::kCronJob, ""), name));
    }
    CronJobState state = std::move(it->second);
    cron_jobs_.erase(it);
    state.resource_version = NextResourceVersionLocked();
    Json object = ParseOwn(state.raw);
    sim::SetResourceVersion(&object, state.resource_version);
    state.raw = model::DumpJson(object);
    EmitCronJobLocked(WatchEventType::kDeleted, state, now);
    // The garbage collector removes the dependents (background propagation), in name order so
    // the event stream is deterministic.
    std::map<std::string, std::string> owned;
    for (const auto& [key, job] : jobs_) {
      if (job.namespace_ == ns && job.owner_name == name && job.owner_uid == state.uid) {
        owned.emplace(key, job.uid);
      }
    }
    for (const auto& [key, uid] : owned) RemoveJobLocked(jobs_.find(key), now);
  }
  NotifyChange();
  return Status::Ok();
}

ApiOutcome SimCluster::Perform(const model::ApiCall& call) {
  ApiOutcome out;
  {
    std::lock_guard lock(mu_);
    const Time now = wall_.Now();
    AdvanceLocked(now);
    out = PerformLocked(call, now);
  }
  if (out.ok() && call.verb != ApiVerb::kGet) NotifyChange();
  return out;
}

ApiOutcome SimCluster::PerformLocked(const model::ApiCall& call, Time now) {
  const std::string key = Key(call.namespace_, call.name);
  if (call.kind == ApiKind::kCronJob) {
    auto it = cron_jobs_.find(key);
    const std::string resource =
        sim::ResourceName(ApiKind::kCronJob, it == cron_jobs_.end() ? "" : it->second.api_version);
    if (call.verb == ApiVerb::kUpdateStatus) return UpdateStatusLocked(call);
    if (call.verb != ApiVerb::kGet)
      return sim::ErrorOutcome("MethodNotAllowed", resource, call.name);
    if (it == cron_jobs_.end()) {
      return sim::ErrorOutcome(model::api_reason::kNotFound, resource, call.name);
    }
    return ApiOutcome::Ok(ParseOwn(it->second.raw));
  }
  const std::string resource = sim::ResourceName(ApiKind::kJob, "");
  switch (call.verb) {
    case ApiVerb::kGet: {
      auto it = jobs_.find(key);
      if (it == jobs_.end()) {
        return sim::ErrorOutcome(model::api_reason::kNotFound, resource, call.name);
      }
      return ApiOutcome::Ok(ParseOwn(it->second.raw));
    }
    case ApiVerb::kCreate:
      return CreateJobLocked(call, now);
    case ApiVerb::kDelete:
      return DeleteJobLocked(call);
    case ApiVerb::kUpdateStatus:
      break;
  }
  return sim::ErrorOutcome("MethodNotAllowed", resource, call.name);
}

ApiOutcome SimCluster::CreateJobLocked(const model::ApiCall& call, Time now) {
  const std::string resource = sim::ResourceName(ApiKind::kJob, "");
  auto decoded = model::DecodeJob(call.object);
  if (!decoded.ok() || decoded->metadata.name != call.name ||
      (!decoded->metadata.namespace_.empty() && decoded->metadata.namespace_ != call.namespace_)) {
    return sim::ErrorOutcome("BadRequest", resource, call.name);
  }
  const std::string key = Key(call.namespace_, call.name);
  const model::OwnerReference* owner = decoded->metadata.ControllerRef();
  const std::string owner_key = owner ? Key(call.namespace_, owner->name) : "";
  if (jobs_.contains(key)) {
    if (!owner_key.empty()) ++counts_[owner_key].already_exists;
    return sim::ErrorOutcome(model::api_reason::kAlreadyExists, resource, call.name);
  }
  const uint64_t generation = create_generation_[key]++;
  JobState job;
  job.namespace_ = call.namespace_;
  job.name = call.name;
  job.uid = FormatUid(SimHash(options_.seed, "job-hi", key, "", generation),
                      SimHash(options_.seed, "job-lo", key, "", generation));
  job.resource_version = NextResourceVersionLocked();
  job.owner_key = owner_key;
  if (owner) {
    job.owner_name = owner->name;
    job.owner_uid = owner->uid;
  }
  Json object = call.object;
  sim::SetCreatedMetadata(&object, call.namespace_, job.uid, job.resource_version, now);
  object["status"] = Json::object();
  job.plan =
      PlanJob(options_.lifecycle, options_.seed, job.uid, sim::ActiveDeadlineSeconds(object));
  job.created = now;
  job.raw = model::DumpJson(object);
  if (!owner_key.empty()) {
    SimJobCounts& c = counts_[owner_key];
    ++c.created;
    ++c.running;
  }
  ScheduleLocked(Later(now, job.plan.start_delay), key, job.uid);
  auto [it, inserted] = jobs_.emplace(key, std::move(job));
  CL_CHECK(inserted);
  EmitJobLocked(WatchEventType::kAdded, it->second, now);
  return ApiOutcome::Ok(std::move(object));
}

ApiOutcome SimCluster::DeleteJobLocked(const model::ApiCall& call) {
  auto it = jobs_.find(Key(call.namespace_, call.name));
  if (it == jobs_.end()) {
    return sim::ErrorOutcome(model::api_reason::kNotFound, sim::ResourceName(ApiKind::kJob, ""),
                             call.name);
  }
  RemoveJobLocked(it, wall_.Now());
  return ApiOutcome::Ok(nullptr);
}

void SimCluster::RemoveJobLocked(std::unordered_map<std::string, JobState>::iterator it, Time now) {
  JobState job = std::move(it->second);
  jobs_.erase(it);
  if (!job.owner_key.empty()) {
    SimJobCounts& c = counts_[job.owner_key];
    ++c.deleted;
    if (job.phase != Phase::kFinished) {
      ++c.deleted_running;
      --c.running;
    }
  }
  // The DELETED event carries the object's last state at a new resourceVersion. Its pending
  // transitions die with it (they check the uid).
  job.resource_version = NextResourceVersionLocked();
  Json object = ParseOwn(job.raw);
  sim::SetResourceVersion(&object, job.resource_version);
  job.raw = model::DumpJson(object);
  EmitJobLocked(WatchEventType::kDeleted, job, now);
}

ApiOutcome SimCluster::UpdateStatusLocked(const model::ApiCall& call) {
  auto it = cron_jobs_.find(Key(call.namespace_, call.name));
  const std::string resource =
      sim::ResourceName(ApiKind::kCronJob, it == cron_jobs_.end() ? "" : it->second.api_version);
  if (it == cron_jobs_.end()) {
    return sim::ErrorOutcome(model::api_reason::kNotFound, resource, call.name);
  }
  CronJobState& state = it->second;
  if (!call.object.is_object()) return sim::ErrorOutcome("BadRequest", resource, call.name);
  if (options_.check_resource_version) {
    const Json& meta = call.object.contains("metadata") ? call.object["metadata"] : Json();
    if (meta.is_object() && meta.contains("resourceVersion") &&
        meta["resourceVersion"].is_string() &&
        !meta["resourceVersion"].get<std::string>().empty() &&
        meta["resourceVersion"].get<std::string>() != state.resource_version) {
      return sim::ErrorOutcome("Conflict", resource, call.name);
    }
  }
  // The status subresource: only status changes, whatever else the request carries.
  Json object = ParseOwn(state.raw);
  if (call.object.contains("status") && !call.object["status"].is_null()) {
    object["status"] = call.object["status"];
  } else {
    object.erase("status");
  }
  state.resource_version = NextResourceVersionLocked();
  sim::SetResourceVersion(&object, state.resource_version);
  state.raw = model::DumpJson(object);
  EmitCronJobLocked(WatchEventType::kModified, state, wall_.Now());
  return ApiOutcome::Ok(std::move(object));
}

void SimCluster::RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) {
  std::lock_guard lock(mu_);
  ++event_reasons_[event.reason];
  if (options_.event_log_capacity == 0) return;
  if (events_.size() == options_.event_log_capacity) events_.pop_front();
  events_.push_back(SimEvent{wall_.Now(), cron_job, event});
}

void SimCluster::ScheduleLocked(Time at, const std::string& key, const std::string& uid) {
  transitions_.push(Transition{at.UnixNanosSaturated(), transition_order_++, key, uid});
}

void SimCluster::AdvanceLocked(Time now) {
  const int64_t now_nanos = now.UnixNanosSaturated();
  while (!transitions_.empty() && transitions_.top().due_nanos <= now_nanos) {
    Transition t = transitions_.top();
    transitions_.pop();
    ApplyTransitionLocked(t);
  }
}

void SimCluster::ApplyTransitionLocked(const Transition& t) {
  auto it = jobs_.find(t.key);
  if (it == jobs_.end() || it->second.uid != t.uid) return;  // deleted (or re-created) meanwhile
  JobState& job = it->second;
  const Time at = Time::FromUnix(t.due_nanos / 1'000'000'000,
                                 static_cast<int32_t>(t.due_nanos % 1'000'000'000));
  Json object = ParseOwn(job.raw);
  SimJobCounts* counts = job.owner_key.empty() ? nullptr : &counts_[job.owner_key];
  if (job.phase == Phase::kPending) {
    job.phase = Phase::kRunning;
    job.started = at;
    sim::SetJobStarted(&object, at);
    if (counts) ++counts->started;
    ScheduleLocked(Later(at, job.plan.run_time), t.key, t.uid);
  } else if (job.phase == Phase::kRunning) {
    job.phase = Phase::kFinished;
    sim::SetJobFinished(&object, job.started, at, job.plan);
    if (counts) {
      ++(job.plan.failed ? counts->failed : counts->succeeded);
      --counts->running;
    }
  } else {
    return;
  }
  job.resource_version = NextResourceVersionLocked();
  sim::SetResourceVersion(&object, job.resource_version);
  job.raw = model::DumpJson(object);
  EmitJobLocked(WatchEventType::kModified, job, at);
}

void SimCluster::EmitJobLocked(WatchEventType type, const JobState& job, Time at) {
  model::WatchEvent ev;
  ev.type = type;
  ev.kind = model::ObjectKind::kJob;
  ev.api_version = "batch/v1";
  ev.namespace_ = job.namespace_;
  ev.name = job.name;
  ev.uid = job.uid;
  ev.resource_version = job.resource_version;
  ev.owner_name = job.owner_name;
  ev.owner_uid = job.owner_uid;
  ev.raw = job.raw;
  pending_.push_back(Pending{at, std::move(ev)});
}

void SimCluster::EmitCronJobLocked(WatchEventType type, const CronJobState& cj, Time at) {
  model::WatchEvent ev;
  ev.type = type;
  ev.kind = model::ObjectKind::kCronJob;
  ev.api_version = cj.api_version;
  ev.namespace_ = cj.namespace_;
  ev.name = cj.name;
  ev.uid = cj.uid;
  ev.resource_version = cj.resource_version;
  ev.raw = cj.raw;
  pending_.push_back(Pending{at, std::move(ev)});
}

std::optional<Time> SimCluster::NextEventTime() {
  std::lock_guard lock(mu_);
  if (!pending_.empty()) return pending_.front().at;
  while (!transitions_.empty()) {
    const Transition& t = transitions_.top();
    auto it = jobs_.find(t.key);
    if (it != jobs_.end() && it->second.uid == t.uid) {
      return Time::FromUnix(t.due_nanos / 1'000'000'000,
                            static_cast<int32_t>(t.due_nanos % 1'000'000'000));
    }
    transitions_.pop();  // the Job is gone: drop its dead transition
  }
  return std::nullopt;
}

std::vector<model::WatchEvent> SimCluster::TakeDueEvents(Time now, size_t max) {
  std::lock_guard lock(mu_);
  AdvanceLocked(now);
  std::vector<model::WatchEvent> out;
  out.reserve(std::min(max, pending_.size()));
  while (!pending_.empty() && out.size() < max) {
    out.push_back(std::move(pending_.front().event));
    pending_.pop_front();
  }
  return out;
}

Result<Json> SimCluster::GetJob(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  AdvanceLocked(wall_.Now());
  auto it = jobs_.find(Key(ns, name));
  if (it == jobs_.end()) return Status::NotFound(Key(ns, name));
  return ParseOwn(it->second.raw);
}

Result<Json> SimCluster::GetCronJob(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = cron_jobs_.find(Key(ns, name));
  if (it == cron_jobs_.end()) return Status::NotFound(Key(ns, name));
  return ParseOwn(it->second.raw);
}

size_t SimCluster::JobCount() {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

namespace {
// Heap bytes of a string: its buffer when it does not fit the inline one, plus malloc's header.
size_t HeapOf(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 + 16 : 0;
}
// A node of an unordered_map/map or a deque slot: the allocation header, links and hash.
constexpr size_t kNodeOverhead = 32;
}  // namespace

size_t SimCluster::ApproxHeapBytes() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, cj] : cron_jobs_) {
    n += kNodeOverhead + sizeof(key) + sizeof(cj) + HeapOf(key) + HeapOf(cj.api_version) +
         HeapOf(cj.namespace_) + HeapOf(cj.name) + HeapOf(cj.uid) + HeapOf(cj.resource_version) +
         HeapOf(cj.raw);
  }
  n += cron_jobs_.bucket_count() * sizeof(void*);
  for (const auto& [key, job] : jobs_) {
    n += kNodeOverhead + sizeof(key) + sizeof(job) + HeapOf(key) + HeapOf(job.namespace_) +
         HeapOf(job.name) + HeapOf(job.uid) + HeapOf(job.resource_version) + HeapOf(job.owner_key) +
         HeapOf(job.owner_name) + HeapOf(job.owner_uid) + HeapOf(job.raw);
  }
  n += jobs_.bucket_count() * sizeof(void*);
  for (const auto& [key, generation] : create_generation_) {
    n += kNodeOverhead + sizeof(key) + sizeof(generation) + HeapOf(key);
  }
  n += create_generation_.bucket_count() * sizeof(void*);
  n += transitions_.size() * (sizeof(Transition) + 2 * 48);  // key and uid are heap strings
  for (const Pending& p : pending_) {
    const model::WatchEvent& ev = p.event;
    n += sizeof(Pending) + HeapOf(ev.api_version) + HeapOf(ev.namespace_) + HeapOf(ev.name) +
         HeapOf(ev.uid) + HeapOf(ev.resource_version) + HeapOf(ev.owner_name) +
         HeapOf(ev.owner_uid) + HeapOf(ev.raw);
  }
  for (const auto& [key, counts] : counts_) {
    n += kNodeOverhead + sizeof(key) + sizeof(counts) + HeapOf(key);
  }
  return n;
}

size_t SimCluster::CronJobCount() {
  std::lock_guard lock(mu_);
  return cron_jobs_.size();
}

SimJobCounts SimCluster::JobCounts(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = counts_.find(std::string(key));
  return it == counts_.end() ? SimJobCounts{} : it->second;
}

std::map<std::string, SimJobCounts> SimCluster::AllJobCounts() {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<SimEvent> SimCluster::RecentEvents() {
  std::lock_guard lock(mu_);
  return {events_.begin(), events_.end()};
}

std::map<std::string, uint64_t> SimCluster::EventCountsByReason() {
  std::lock_guard lock(mu_);
  return event_reasons_;
}

}  // namespace cronledger::controller
