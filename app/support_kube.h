#pragma once

// The Kubernetes API client of the commands that talk to a real API server (`run`, `relay`):
// a PocoKubeClient over the loaded kubeconfig, on the system's monotonic clock (app/system_clock.h)
// and the given sleeper (client back-off waits).

#include <memory>
#include <string>

#include "kube/config.h"
#include "kube/poco_client.h"
#include "kube/sleeper.h"
#include "model/result.h"

namespace cronledger::app {

// `sleeper` must outlive the client. `user_agent` names the command, e.g.
// "cronledger/0.1.0 (watch-relay)". Errors are PocoKubeClient::Open's.
Result<std::unique_ptr<kube::PocoKubeClient>> OpenKubeClient(const kube::KubeConfig& config,
                                                             kube::Sleeper& sleeper,
                                                             const std::string& user_agent);

}  // namespace cronledger::app
