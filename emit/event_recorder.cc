#include "emit/event_recorder.h"

#include <algorithm>
#include <cstdio>

#include "kube/resource.h"

namespace cronledger::emit {
namespace {

// events.k8s.io/v1 validation: note is at most 1 kB.
constexpr size_t kMaxNoteBytes = 1024;

// events.k8s.io/v1 requires an action (what the controller did); upstream's legacy recorder has
// none, so it is derived from the reason.
std::string ActionOf(const std::string& reason) {
  if (reason == "SuccessfulCreate" || reason == "FailedCreate") return "Create";
  if (reason == "SuccessfulDelete" || reason == "FailedDelete") return "Delete";
  if (reason == "FailedGet") return "Get";
  return "Sync";
}

std::string SeriesKey(const EventRegarding& r, const std::string& type, const std::string& reason,
                      const std::string& message) {
  std::string key;
  for (const std::string* part :
       {&r.api_version, &r.kind, &r.namespace_, &r.name, &r.uid, &type, &reason, &message}) {
    key += *part;
    key.push_back('\0');
  }
  return key;
}

}  // namespace

std::string FormatMicroTime(Time t) {
  std::string s = FormatRfc3339(t.TruncateToSecond());  // "...:05Z"
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06d", t.nanos() / 1000);
  s.insert(s.size() - 1, frac);
  return s;
}

EventRecorder::EventRecorder(kube::KubeClient& client, const WallClock& clock,
                             EventRecorderOptions options,
                             std::function<void(const std::string&)> log)
    : client_(client), clock_(clock), options_(std::move(options)), log_(std::move(log)) {
  sender_ = std::thread([this] { SendLoop(); });
}

EventRecorder::~EventRecorder() { Stop(std::chrono::seconds(2)); }

void EventRecorder::Record(const EventRegarding& regarding, const std::string& type,
                           const std::string& reason, const std::string& message) {
  Pending event{regarding, type, reason, message, clock_.Now()};
  {
    std::lock_guard lock(mu_);
    if (stop_ || queue_.size() >= options_.max_queued) {
      ++stats_.dropped;
      return;
    }
    queue_.push_back(std::move(event));
    ++recorded_;
  }
  wake_.notify_one();
}

bool EventRecorder::Flush(Duration timeout) {
  std::unique_lock lock(mu_);
  const uint64_t target = recorded_;
  return drained_.wait_for(lock, timeout, [&] { return sent_ >= target; });
}

void EventRecorder::Stop(Duration drain) {
  {
    std::unique_lock lock(mu_);
    if (!stop_) {
      drained_.wait_for(lock, drain, [&] { return queue_.empty(); });
      stats_.dropped += queue_.size();
      sent_ += queue_.size();
      queue_.clear();
      stop_ = true;
    }
  }
  wake_.notify_all();
  drained_.notify_all();
  if (sender_.joinable() && sender_.get_id() != std::this_thread::get_id()) sender_.join();
}

void EventRecorder::SendLoop() {
  for (;;) {
    Pending event;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      event = std::move(queue_.front());
      queue_.pop_front();
    }
    Send(event);
    {
      std::lock_guard lock(mu_);
      ++sent_;
    }
    drained_.notify_all();
  }
}

void EventRecorder::Send(const Pending& event) {
  std::lock_guard lock(send_mu_);
  const Time now = event.observed;
  Prune(now);
  const std::string key = SeriesKey(event.regarding, event.type, event.reason, event.message);
  auto it = series_.find(key);
  if (it != series_.end()) {
    lru_.erase(it->second.lru);
    it->second.lru = lru_.insert(lru_.end(), key);
    if (Bump(event.regarding, now, &it->second)) return;
    // The Event is gone (or the patch failed): start a new one.
  } else {
    if (series_.size() >= options_.max_series && !lru_.empty()) Forget(series_.find(lru_.front()));
    Series s;
    s.lru = lru_.insert(lru_.end(), key);
    it = series_.emplace(key, std::move(s)).first;
  }
  if (!Create(event.regarding, event.type, event.reason, event.message, now, &it->second)) {
    Forget(it);
  }
}

bool EventRecorder::Create(const EventRegarding& regarding, const std::string& type,
                           const std::string& reason, const std::string& message, Time now,
                           Series* series) {
  // client-go names an Event "<regarding name>.<hex unix nanos>"; equal instants (a manual clock,
  // a burst) get the next nanosecond so names stay unique.
  int64_t nanos = std::max(now.UnixNanosSaturated(), last_name_nanos_ + 1);
  last_name_nanos_ = nanos;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  const std::string name = regarding.name + "." + hex;
  model::Json event = {{"apiVersion", "events.k8s.io/v1"}, {"kind", "Event"}};
  event["metadata"] = {{"name", name}, {"namespace", regarding.namespace_}};
  event["eventTime"] = FormatMicroTime(now);
  event["reportingController"] = options_.reporting_controller;
  event["reportingInstance"] = options_.reporting_instance;
  event["action"] = ActionOf(reason);
  event["reason"] = reason;
  event["type"] = type;
  event["note"] = message.substr(0, kMaxNoteBytes);
  event["regarding"] = {{"apiVersion", regarding.api_version},
                        {"kind", regarding.kind},
                        {"namespace", regarding.namespace_},
                        {"name", regarding.name},
                        {"uid", regarding.uid}};
  auto created = client_.Create(kube::Events(), regarding.namespace_, event);
  if (!created.ok()) {
    Count(&EventRecorderStats::failed);
    if (log_)
      log_("event " + reason + " on " + regarding.namespace_ + "/" + regarding.name +
           " not recorded: " + created.error().ToString());
    return false;
  }
  Count(&EventRecorderStats::created);
  series->event_name = name;
  series->count = 1;
  series->last_observed = now;
  return true;
}

bool EventRecorder::Bump(const EventRegarding& regarding, Time now, Series* series) {
  const int64_t count = series->count + 1;
  model::Json patch = {{"series", {{"count", count}, {"lastObservedTime", FormatMicroTime(now)}}}};
  auto patched = client_.Patch(kube::Events(), regarding.namespace_, series->event_name,
                               kube::PatchType::kMerge, patch, "");
  if (!patched.ok()) {
    if (!patched.error().IsNotFound()) {
      Count(&EventRecorderStats::failed);
      if (log_)
        log_("event series " + series->event_name + " not updated: " + patched.error().ToString());
    }
    return false;
  }
  Count(&EventRecorderStats::aggregated);
  series->count = count;
  series->last_observed = now;
  return true;
}

void EventRecorder::Forget(std::map<std::string, Series>::iterator it) {
  if (it == series_.end()) return;
  lru_.erase(it->second.lru);
  series_.erase(it);
}

void EventRecorder::Prune(Time now) {
  // lru_ is ordered by last observation, so the stale entries are at its front.
  while (!lru_.empty()) {
    auto it = series_.find(lru_.front());
    if (now.Sub(it->second.last_observed) < options_.series_window) break;
    Forget(it);
  }
}

EventRecorderStats EventRecorder::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t EventRecorder::cached_series() const {
  std::lock_guard lock(send_mu_);
  return series_.size();
}

size_t EventRecorder::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void EventRecorder::Count(uint64_t EventRecorderStats::*counter) {
  std::lock_guard lock(mu_);
  ++(stats_.*counter);
}

}  // namespace cronledger::emit
