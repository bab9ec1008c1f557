#include "reconciler/decide_codec.h"

namespace cronledger::reconciler {

model::Json EncodeSyncResult(const SyncResult& result) {
  using model::Json;
  Json out = Json::object();
  out["actions"] = Json::array();
  for (const auto& a : result.actions) out["actions"].push_back(model::EncodeApiCall(a));
  out["events"] = Json::array();
  for (const auto& e : result.events) {
    out["events"].push_back({{"type", e.type}, {"reason", e.reason}, {"message", e.message}});
  }
  out["status"] = model::EncodeCronJobStatus(result.status);
  out["statusChanged"] = result.status_changed;
  out["requeueAfterSeconds"] = result.requeue_after
                                   ? Json(static_cast<double>(result.requeue_after->count()) / 1e9)
                                   : Json(nullptr);
  out["error"] = result.error ? Json(*result.error) : Json(nullptr);
  out["decisions"] = Json::array();
  for (const auto& d : result.decisions) out["decisions"].push_back(model::EncodeDecision(d));
  return out;
}

}  // namespace cronledger::reconciler
