#include "kube/lease.h"

#include <cstdio>

namespace cronledger::kube {
namespace {

std::string MicroTime(Time t) {
  std::string s = FormatRfc3339(t.TruncateToSecond());
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06d", t.nanos() / 1000);
  s.insert(s.size() - 1, frac);
  return s;
}

int64_t Seconds(Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

std::string HolderOf(const Json& spec) {
  if (!spec.is_object() || !spec.contains("holderIdentity") ||
      !spec["holderIdentity"].is_string()) {
    return "";
  }
  return spec["holderIdentity"].get<std::string>();
}

int64_t IntOf(const Json& spec, const char* key, int64_t fallback) {
  if (!spec.is_object() || !spec.contains(key) || !spec[key].is_number_integer()) return fallback;
  return spec[key].get<int64_t>();
}

}  // namespace

Status ValidateLeaderElection(const LeaderElectionOptions& o) {
  if (o.identity.empty()) return Status::InvalidArgument("leader election: identity is required");
  if (o.name.empty() || o.namespace_.empty()) {
    return Status::InvalidArgument("leader election: the lease needs a name and a namespace");
  }
  if (o.retry_period <= Duration::zero() || o.renew_deadline <= o.retry_period ||
      o.lease_duration <= o.renew_deadline) {
    return Status::InvalidArgument(
        "leader election: need lease duration > renew deadline > retry period > 0");
  }
  return Status::Ok();
}

LeaseElector::LeaseElector(KubeClient& client, const WallClock& wall, const MonotonicClock& mono,
                           LeaderElectionOptions options)
    : client_(client), wall_(wall), mono_(mono), options_(std::move(options)) {}

Json LeaseElector::Record(const Json& old_spec, Time now) const {
  const bool ours = HolderOf(old_spec) == options_.identity;
  Json spec = {{"holderIdentity", options_.identity},
               {"leaseDurationSeconds", Seconds(options_.lease_duration)},
               {"renewTime", MicroTime(now)}};
  const int64_t transitions = IntOf(old_spec, "leaseTransitions", 0);
  if (ours && old_spec.contains("acquireTime")) {
    spec["acquireTime"] = old_spec["acquireTime"];
    spec["leaseTransitions"] = transitions;
  } else {
    spec["acquireTime"] = MicroTime(now);
    // A first record starts at 0; every change of holder counts one transition.
    spec["leaseTransitions"] = old_spec.is_null() ? 0 : transitions + 1;
  }
  return spec;
}

bool LeaseElector::TryAcquireOrRenew(Time now, int64_t now_mono) {
  auto fail = [this](std::string why) {
    std::lock_guard lock(mu_);
    last_error_ = std::move(why);
    return false;
  };
  auto got = client_.Get(Leases(), options_.namespace_, options_.name);
  if (!got.ok() && !got.error().IsNotFound()) return fail(got.error().ToString());
  if (!got.ok()) {
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"}};
    lease["metadata"] = {{"name", options_.name}, {"namespace", options_.namespace_}};
    lease["spec"] = Record(nullptr, now);
    auto created = client_.Create(Leases(), options_.namespace_, lease);
    if (!created.ok()) return fail(created.error().ToString());
    observed_spec_ = lease["spec"];
    observed_mono_ = now_mono;
    observed_holder_ = options_.identity;
    return true;
  }
  Json lease = std::move(got).value();
  const Json spec = lease.contains("spec") ? lease["spec"] : Json::object();
  if (spec != observed_spec_) {
    observed_spec_ = spec;
    observed_mono_ = now_mono;
  }
  observed_holder_ = HolderOf(spec);
  if (!observed_holder_.empty() && observed_holder_ != options_.identity) {
    const int64_t duration_ns =
        IntOf(spec, "leaseDurationSeconds", Seconds(options_.lease_duration)) * 1'000'000'000;
    if (observed_mono_ + duration_ns > now_mono) {
      return fail("lease held by " + observed_holder_);
    }
  }
  lease["spec"] = Record(spec, now);
  auto updated = client_.Update(Leases(), options_.namespace_, lease);
  if (!updated.ok()) return fail(updated.error().ToString());
  observed_spec_ = lease["spec"];
  observed_mono_ = now_mono;
  observed_holder_ = options_.identity;
  return true;
}

bool LeaseElector::Step() {
  const int64_t now_mono = mono_.NowNanos();
  const bool ok = TryAcquireOrRenew(wall_.Now(), now_mono);
  if (ok) {
    {
      std::lock_guard lock(mu_);
      last_error_.clear();
    }
    last_renew_mono_ = now_mono;
    leader_.store(true);
  } else if (leader_.load()) {
    const bool taken = !observed_holder_.empty() && observed_holder_ != options_.identity;
    const bool late = now_mono - last_renew_mono_ >= options_.renew_deadline.count();
    if (taken || late) leader_.store(false);
  }
  return leader_.load();
}

void LeaseElector::Run(const Cancellation& cancel, Sleeper& sleeper,
                       const std::function<void()>& on_started,
                       const std::function<void()>& on_stopped) {
  bool leading = false;
  while (!cancel.cancelled()) {
    const bool now_leading = Step();
    if (now_leading != leading) {
      leading = now_leading;
      if (leading && on_started) on_started();
      if (!leading && on_stopped) on_stopped();
    }
    if (!sleeper.SleepFor(options_.retry_period, cancel)) break;
  }
  if (leading) {
    // Best effort: a failed release only means the next leader waits for the lease to expire.
    (void)Release();
    if (on_stopped) on_stopped();
  }
}

Status LeaseElector::Release() {
  if (!leader_.load()) return Status::Ok();
  leader_.store(false);
  auto got = client_.Get(Leases(), options_.namespace_, options_.name);
  if (!got.ok()) return got.status();
  Json lease = std::move(got).value();
  if (HolderOf(lease.contains("spec") ? lease["spec"] : Json()) != options_.identity) {
    return Status::Ok();
  }
  const Time now = wall_.Now();
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = MicroTime(now);
  lease["spec"]["acquireTime"] = MicroTime(now);
  auto updated = client_.Update(Leases(), options_.namespace_, lease);
  return updated.status();
}

std::string LeaseElector::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

}  // namespace cronledger::kube
