#pragma once
// Shared by the real-time process tests (tests/run, tests/kafka): every-minute CronJobs named
// `cj` whose Jobs are named `cj-<unix minute>` by the controller's deterministic naming.

#include <cstdint>
#include <map>
#include <string>

#include "kube/resource.h"
#include "kube/testing/fake_api_server.h"

namespace cronledger::testing {

// True when every CronJob of `created` (name -> the unix minute it was created in) has the Jobs of
// every minute after that one up to `now_minute`, and of its creation minute too when that is
// still the current one (a boundary may pass before the controller first sees the CronJob, so the
// creation minute itself is not required later). Otherwise names the first missing Job.
inline bool AllMinuteJobsExist(const kube::testing::FakeApiServer& server, const std::string& ns,
                               const std::map<std::string, int64_t>& created, int64_t now_minute,
                               std::string* missing) {
  for (const auto& [cj, minute] : created) {
    const int64_t first = now_minute == minute ? minute : minute + 1;
    for (int64_t m = first; m <= now_minute; ++m) {
      const std::string job = cj + "-" + std::to_string(m);
      if (!server.Get(kube::BatchJobs(), ns, job)) {
        *missing = job;
        return false;
      }
    }
  }
  return true;
}

}  // namespace cronledger::testing
