#pragma once

// Test code only. FakeActuator: an in-memory API server for the controller's tests. It keeps
// CronJobs and Jobs as JSON, answers the calls of a pass like the API server would (create of an
// existing name -> AlreadyExists, get/delete of a missing one -> NotFound, updateStatus replaces
// the status), assigns deterministic uids and resourceVersions, emits the watch events a real
// watch would deliver (TakeEvents), and injects errors on demand. Thread-safe.

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/actuator.h"
#include "controller/watch_events.h"
#include "model/clock.h"
#include "model/json.h"
#include "reconciler/api_emulator.h"

namespace cronledger::controller::testing {

// "createJob", "getJob", "deleteJob", "getCronJob", "updateStatus" (as `cronledger decide`).
inline std::string CallKey(const model::ApiCall& call) {
  switch (call.verb) {
    case model::ApiVerb::kGet:
      return call.kind == model::ApiKind::kJob ? "getJob" : "getCronJob";
    case model::ApiVerb::kCreate:
      return "createJob";
    case model::ApiVerb::kDelete:
      return "deleteJob";
    case model::ApiVerb::kUpdateStatus:
      return "updateStatus";
  }
  return "";
}

class FakeActuator : public Actuator {
 public:
  explicit FakeActuator(const WallClock& clock) : clock_(clock) {}

  // --- the cluster, as a user or the Job controller changes it
  // Creates or replaces a CronJob (uid and creationTimestamp kept across updates).
  void PutCronJob(model::Json cj) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string key = KeyOf(cj);
    auto it = cron_jobs_.find(key);
    model::Json& meta = cj["metadata"];
    if (it != cron_jobs_.end()) {
      meta["uid"] = it->second["metadata"]["uid"];
      meta["creationTimestamp"] = it->second["metadata"]["creationTimestamp"];
      if (!cj.contains("status")) cj["status"] = it->second["status"];
    } else {
      if (!meta.contains("uid")) meta["uid"] = NewUid("cj");
      if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = Now();
    }
    Store(&cron_jobs_, key, std::move(cj), it == cron_jobs_.end());
  }
  void DeleteCronJob(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    Remove(&cron_jobs_, ns + "/" + name);
  }
  // Marks a Job finished: condition "Complete" or "Failed" = True, completionTime now.
  void FinishJob(const std::string& ns, const std::string& name, const std::string& condition) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(ns + "/" + name);
    if (it == jobs_.end()) return;
    model::Json job = it->second;
    job["status"]["conditions"] = model::Json::array(
        {model::Json{{"type", condition}, {"status", "True"}, {"lastTransitionTime", Now()}}});
    job["status"]["completionTime"] = Now();
    Store(&jobs_, it->first, std::move(job), false);
  }

  // --- error injection: the next `times` calls of `call_key` fail with `reason` (-1: all)
  void FailCalls(const std::string& call_key, const std::string& reason, int times) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_[call_key] = {reason, times};
  }

  // --- persistence, for tests whose cluster must outlive a killed process
  // Called with every change, in order, before the call that made it returns.
  void SetChangeHook(std::function<void(const model::WatchEvent&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    change_hook_ = std::move(hook);
  }
  // Called in Perform before the call is applied (phase 0) and after (phase 1).
  void SetCallHook(std::function<void(const model::ApiCall&, int phase)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    call_hook_ = std::move(hook);
  }
  // Called by Perform after the call is applied, without the cluster's lock, before it answers:
  // a test can deliver the call's watch events to the controller then, ahead of the answer.
  void SetBeforeAnswerHook(std::function<void(const model::ApiCall&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    before_answer_hook_ = std::move(hook);
  }
  // Rebuilds the state from the changes a previous instance reported (no events are emitted).
  void Restore(const std::vector<model::WatchEvent>& changes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const model::WatchEvent& ev : changes) {
      auto& objects = ev.kind == model::ObjectKind::kJob ? jobs_ : cron_jobs_;
      const std::string key = ev.namespace_ + "/" + ev.name;
      resource_version_ = std::max<uint64_t>(resource_version_, std::stoull(ev.resource_version));
      if (ev.type == model::WatchEventType::kDeleted) {
        objects.erase(key);
        continue;
      }
      if (ev.type == model::WatchEventType::kAdded) {
        ++uid_;
        if (ev.kind == model::ObjectKind::kJob) ++created_[ev.name];
      }
      objects[key] = model::ParseJson(ev.raw).value();
    }
  }
  // Every object as ADDED events, CronJobs first (an informer's relist).
  std::vector<model::WatchEvent> List() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<model::WatchEvent> out;
    for (const auto* objects : {&cron_jobs_, &jobs_}) {
      for (const auto& [key, obj] : *objects) {
        out.push_back(MakeWatchEvent(model::WatchEventType::kAdded, obj).value());
      }
    }
    return out;
  }
  bool HasJob(const std::string& ns, const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.count(ns + "/" + name) != 0;
  }
  // Jobs started before `cutoff` that have not finished (the Job controller's view).
  std::vector<std::string> RunningJobsStartedBefore(Time cutoff) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [key, job] : jobs_) {
      const model::Json& st = job["status"];
      if (st.contains("conditions") || !st.contains("startTime")) continue;
      auto started = ParseRfc3339(st["startTime"].get<std::string>());
      if (started.ok() && *started < cutoff)
        out.push_back(job["metadata"]["name"].get<std::string>());
    }
    return out;
  }

  // --- what happened
  std::vector<model::WatchEvent> TakeEvents() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<model::WatchEvent> out(events_.begin(), events_.end());
    events_.clear();
    return out;
  }
  std::vector<std::string> JobNames() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [key, job] : jobs_) out.push_back(job["metadata"]["name"].get<std::string>());
    return out;
  }
  std::optional<model::Json> GetCronJobObject(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cron_jobs_.find(ns + "/" + name);
    if (it == cron_jobs_.end()) return std::nullopt;
    return it->second;
  }
  // Blocks until at least `n` calls were performed (tests of the real-time workers).
  void WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    calls_cv_.wait(lock, [&] { return calls_.size() >= n; });
  }
  std::vector<model::ApiCall> Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Successful creates per Job name (a name created twice would count 2).
  std::map<std::string, int> Created() const {
    std::lock_guard<std::mutex> lock(mu_);
    return created_;
  }
  std::vector<reconciler::Event> Events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return recorded_;
  }

  // --- Actuator
  model::ApiOutcome Perform(const model::ApiCall& call) override {
    std::function<void(const model::ApiCall&)> before_answer;
    model::ApiOutcome outcome;
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(call);
      if (call_hook_) call_hook_(call, 0);
      outcome = Apply(call);
      if (call_hook_) call_hook_(call, 1);
      calls_cv_.notify_all();
      before_answer = before_answer_hook_;
    }
    if (before_answer) before_answer(call);
    return outcome;
  }
  void RecordEvent(const model::CronJobRef&, const reconciler::Event& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    recorded_.push_back(event);
  }

 private:
  model::ApiOutcome Apply(const model::ApiCall& call) {
    auto f = failures_.find(CallKey(call));
    if (f != failures_.end() && f->second.second != 0) {
      if (f->second.second > 0) --f->second.second;
      return Error(f->second.first, call);
    }
    const std::string key = call.namespace_ + "/" + call.name;
    auto& objects = call.kind == model::ApiKind::kJob ? jobs_ : cron_jobs_;
    auto it = objects.find(key);
    switch (call.verb) {
      case model::ApiVerb::kGet:
        if (it == objects.end()) return Error("NotFound", call);
        return model::ApiOutcome::Ok(it->second);
      case model::ApiVerb::kCreate:
        if (it != objects.end()) return Error("AlreadyExists", call);
        return model::ApiOutcome::Ok(CreateJob(key, call.object));
      case model::ApiVerb::kDelete:
        if (it == objects.end()) return Error("NotFound", call);
        Remove(&objects, key);
        return model::ApiOutcome::Ok(nullptr);
      case model::ApiVerb::kUpdateStatus: {
        if (it == objects.end()) return Error("NotFound", call);
        model::Json updated = it->second;
        updated["status"] = call.object.value("status", model::Json::object());
        Store(&objects, key, updated, false);
        return model::ApiOutcome::Ok(objects.at(key));
      }
    }
    return Error("BadRequest", call);
  }

  static std::string KeyOf(const model::Json& obj) {
    return obj["metadata"].value("namespace", "default") + "/" +
           obj["metadata"]["name"].get<std::string>();
  }
  std::string Now() const { return FormatRfc3339(clock_.Now()); }
  std::string NewUid(const std::string& prefix) {
    return prefix + "-uid-" + std::to_string(++uid_);
  }
  static model::ApiOutcome Error(const std::string& reason, const model::ApiCall& call) {
    return model::ApiOutcome::Error(reason, reconciler::EmulatedApi::ErrorMessage(reason, call));
  }

  model::Json CreateJob(const std::string& key, model::Json job) {
    model::Json& meta = job["metadata"];
    meta["uid"] = NewUid("job");
    meta["creationTimestamp"] = Now();
    // The Job controller starts it at once in this model.
    job["status"] = model::Json{{"startTime", Now()}};
    ++created_[meta["name"].get<std::string>()];
    Store(&jobs_, key, job, true);
    return jobs_.at(key);
  }
  void Store(std::map<std::string, model::Json>* objects, const std::string& key, model::Json obj,
             bool added) {
    obj["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
    (*objects)[key] = obj;
    Emit(added ? model::WatchEventType::kAdded : model::WatchEventType::kModified, obj);
  }
  void Remove(std::map<std::string, model::Json>* objects, const std::string& key) {
    auto it = objects->find(key);
    if (it == objects->end()) return;
    model::Json last = it->second;
    objects->erase(it);
    Emit(model::WatchEventType::kDeleted, last);
  }
  void Emit(model::WatchEventType type, const model::Json& obj) {
    auto ev = MakeWatchEvent(type, obj);
    CL_CHECK(ev.ok());  // the fake stores only objects it could name
    if (change_hook_) change_hook_(*ev);
    events_.push_back(std::move(*ev));
  }

  const WallClock& clock_;
  mutable std::mutex mu_;
  std::condition_variable calls_cv_;
  std::map<std::string, model::Json> cron_jobs_;
  std::map<std::string, model::Json> jobs_;
  std::deque<model::WatchEvent> events_;
  std::map<std::string, std::pair<std::string, int>> failures_;
  std::vector<model::ApiCall> calls_;
  std::map<std::string, int> created_;
  std::vector<reconciler::Event> recorded_;
  std::function<void(const model::WatchEvent&)> change_hook_;
  std::function<void(const model::ApiCall&, int)> call_hook_;
  std::function<void(const model::ApiCall&)> before_answer_hook_;
  uint64_t uid_ = 0;
  uint64_t resource_version_ = 0;
};

}  // namespace cronledger::controller::testing
