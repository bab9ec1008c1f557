// OpenKubeClient: the API client of `run` and `relay` (app/support_kube.h).
#include "app/support_kube.h"

#include "app/system_clock.h"

namespace cronledger::app {

Result<std::unique_ptr<kube::PocoKubeClient>> OpenKubeClient(const kube::KubeConfig& config,
                                                             kube::Sleeper& sleeper,
                                                             const std::string& user_agent) {
  kube::PocoKubeClientOptions options;
  options.config = config;
  options.clock = &RealClock();
  options.wall_clock = &RealClock();
  options.sleeper = &sleeper;
  options.user_agent = user_agent;
  return kube::PocoKubeClient::Open(options);
}

}  // namespace cronledger::app
