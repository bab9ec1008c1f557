#pragma once

// The Kubernetes API client of the commands that talk to a real API server (`run`, `relay`):
// a PocoKubeClient over the loaded kubeconfig, on the system's monotonic clock (app/system_clock.h)
// and the given sleeper (client back-off waits).

#include <memory>
#include <string>

#include "app/flags.h"
#include "kube/config.h"
#include "kube/poco_client.h"
#include "kube/sleeper.h"
#include "model/result.h"

namespace cronledger::app {

// The client-side rate limit of the API client: --kube-api-qps and --kube-api-burst, spelled
// as kube-controller-manager spells them, with client-go's controller defaults.
struct KubeApiLimits {
  double qps = 20;
  int burst = 30;
};
void DeclareKubeApiFlags(Flags& flags);
// InvalidArgument naming the flag: qps must be a number > 0, burst a whole number >= 1.
Result<KubeApiLimits> ParseKubeApiFlags(const Flags& flags);

// `sleeper` must outlive the client. `user_agent` names the command, e.g.
// "cronledger/0.1.0 (watch-relay)". Errors are PocoKubeClient::Open's.
Result<std::unique_ptr<kube::PocoKubeClient>> OpenKubeClient(const kube::KubeConfig& config,
                                                             const KubeApiLimits& limits,
                                                             kube::Sleeper& sleeper,
                                                             const std::string& user_agent);

}  // namespace cronledger::app
