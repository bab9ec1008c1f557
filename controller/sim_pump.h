#pragma once

// Real-time delivery of a SimCluster's watch events: a thread that hands every event to a sink
// (normally Controller::Ingest) as soon as it is due on the injected wall clock — immediately for
// changes made by calls, at their due time for Job lifecycle transitions. In virtual time nothing
// here is needed: the caller takes events itself (SimCluster::TakeDueEvents).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/sim_cluster.h"
#include "model/clock.h"

namespace cronledger::controller {

struct SimPumpOptions {
  // Events handed to the sink per call at most (one ledger unit of work each). Default: 4096.
  size_t max_batch = 4096;
  // The longest the thread waits without looking at the clock, so a clock that is not the real
  // one (or one that jumps) is still followed. Default: 50 ms.
  Duration max_wait = std::chrono::milliseconds(50);
};

struct SimPumpStats {
  uint64_t events = 0;    // events delivered
  uint64_t batches = 0;   // sink calls
  uint64_t failures = 0;  // sink calls that returned an error (the events are not redelivered)
};

class SimEventPump {
 public:
  using Sink = std::function<Status(std::vector<model::WatchEvent>)>;

  // `cluster` and `wall` are not owned and must outlive the pump. The pump installs the cluster's
  // change callback (SimCluster::SetOnChange) in Start().
  SimEventPump(SimCluster& cluster, const WallClock& wall, Sink sink, SimPumpOptions options = {});
  ~SimEventPump();  // Stop()s

  void Start();
  // Delivers what is due now, then joins the thread. Idempotent.
  void Stop();

  SimPumpStats Stats() const;
  // The first error the sink returned (OK when none).
  Status FirstError() const;

 private:
  void Loop();
  void Deliver(std::vector<model::WatchEvent> events);

  SimCluster& cluster_;
  const WallClock& wall_;
  Sink sink_;
  const SimPumpOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool changed_ = false;
  SimPumpStats stats_;
  Status first_error_;
  std::thread thread_;
};

}  // namespace cronledger::controller
