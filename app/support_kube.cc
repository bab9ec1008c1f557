// OpenKubeClient: the API client of `run` and `relay` (app/support_kube.h).
#include "app/support_kube.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "app/system_clock.h"

namespace cronledger::app {

void DeclareKubeApiFlags(Flags& flags) { flags.Value("kube-api-qps").Value("kube-api-burst"); }

Result<KubeApiLimits> ParseKubeApiFlags(const Flags& flags) {
  KubeApiLimits limits;
  if (const auto qps = flags.Get("kube-api-qps")) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(qps->c_str(), &end);
    if (qps->empty() || end != qps->c_str() + qps->size() || errno != 0 || !std::isfinite(v) ||
        v <= 0) {
      return Status::InvalidArgument(
          "--kube-api-qps: a number of requests per second above 0, not \"" + *qps + "\"");
    }
    limits.qps = v;
  }
  CL_ASSIGN_OR_RETURN(const uint64_t burst, flags.Uint("kube-api-burst", 1, 1000000,
                                                       static_cast<uint64_t>(limits.burst)));
  limits.burst = static_cast<int>(burst);
  return limits;
}

Result<std::unique_ptr<kube::PocoKubeClient>> OpenKubeClient(const kube::KubeConfig& config,
                                                             const KubeApiLimits& limits,
                                                             kube::Sleeper& sleeper,
                                                             const std::string& user_agent) {
  kube::PocoKubeClientOptions options;
  options.qps = limits.qps;
  options.burst = limits.burst;
  options.config = config;
  options.clock = &RealClock();
  options.wall_clock = &RealClock();
  options.sleeper = &sleeper;
  options.user_agent = user_agent;
  return kube::PocoKubeClient::Open(options);
}

}  // namespace cronledger::app
