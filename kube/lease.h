#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, like client-go's leaderelection with the
// LeaseLock (docs/run.md "Leader election"). The Lease's spec is the election record:
// holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions.
//
// One Step() is client-go's tryAcquireOrRenew:
//   * no Lease → create it holding it (transitions 0);
//   * a Lease held by someone else is respected until `leaseDurationSeconds` have passed on OUR
//     monotonic clock since we last saw its record change (client-go judges expiry by local
//     observation time, not by the renewTime written by another machine's clock, so clock skew
//     between nodes does not matter);
//   * otherwise PUT the record with the observed resourceVersion (optimistic concurrency: of two
//     candidates only one write succeeds); taking over from another holder sets acquireTime and
//     increments leaseTransitions, renewing keeps them.
// The leader renews every retry period. If renewals fail for `renew_deadline` (measured from the
// last successful renewal) it steps down; it also steps down at once when it sees another holder
// in the record. Because renew_deadline < lease_duration, a leader that cannot renew stops acting
// before any other candidate may take over.
//
// Time: wall time only stamps acquireTime/renewTime; all decisions use the injected monotonic
// clock, so tests drive the election with a ManualClock. Thread safety: Step/Run/Release from one
// thread; IsLeader() from any.

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "kube/client.h"
#include "model/clock.h"

namespace cronledger::kube {

struct LeaderElectionOptions {
  // --leader-elect-namespace. Default: "default" (`cronledger run` uses the pod's namespace when
  // running in a cluster).
  std::string namespace_ = "default";
  // --leader-elect-id: the Lease's name. Default: "cronledger-controller".
  std::string name = "cronledger-controller";
  // This candidate, unique per process (host name + a random-free suffix). Required.
  std::string identity;
  // --leader-elect-lease-duration. Default: 15 s (controller-runtime).
  Duration lease_duration = std::chrono::seconds(15);
  // --leader-elect-renew-deadline. Default: 10 s.
  Duration renew_deadline = std::chrono::seconds(10);
  // --leader-elect-retry-period. Default: 2 s.
  Duration retry_period = std::chrono::seconds(2);
};

// InvalidArgument unless identity is set and lease_duration > renew_deadline > retry_period > 0
// (client-go's NewLeaderElector checks).
Status ValidateLeaderElection(const LeaderElectionOptions& options);

class LeaseElector {
 public:
  // `client` and the clocks must outlive the elector.
  LeaseElector(KubeClient& client, const WallClock& wall, const MonotonicClock& mono,
               LeaderElectionOptions options);

  // One acquire-or-renew round (see the file comment). Returns whether this candidate leads now.
  bool Step();
  bool IsLeader() const { return leader_.load(); }

  // Steps every retry period until `cancel` fires, calling `on_started` / `on_stopped` (may be
  // empty) on this thread when leadership is gained or lost. On cancellation a leader releases
  // the Lease (holder cleared, duration 1 s, like client-go's ReleaseOnCancel) and `on_stopped`
  // runs.
  void Run(const Cancellation& cancel, Sleeper& sleeper, const std::function<void()>& on_started,
           const std::function<void()>& on_stopped);

  // Gives the Lease up if held: the next candidate takes over without waiting for expiry.
  Status Release();

  const LeaderElectionOptions& options() const { return options_; }
  // The last error of Step(), for logs ("" after a success).
  std::string last_error() const;

 private:
  bool TryAcquireOrRenew(Time now, int64_t now_mono);
  Json Record(const Json& old_spec, Time now) const;

  KubeClient& client_;
  const WallClock& wall_;
  const MonotonicClock& mono_;
  const LeaderElectionOptions options_;
  std::atomic<bool> leader_{false};
  Json observed_spec_;           // the record as last seen
  int64_t observed_mono_ = 0;    // when it was last seen to change
  int64_t last_renew_mono_ = 0;  // the last successful acquire/renew
  std::string observed_holder_;
  mutable std::mutex mu_;
  std::string last_error_;
};

}  // namespace cronledger::kube
