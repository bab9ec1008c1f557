#include "bench/controller/measuring_ledger.h"

#include <string>
#include <utility>
#include <vector>

namespace cronledger::bench {

MeasuringLedger::MeasuringLedger(std::unique_ptr<store::Ledger> inner, const WallClock& wall)
    : ForwardingLedger(*inner), inner_(std::move(inner)), wall_(wall) {}

void MeasuringLedger::SetWindow(Time from, Time until) {
  from_nanos_.store(from.UnixNanosSaturated());
  until_nanos_.store(until.UnixNanosSaturated());
}

WriteCounts MeasuringLedger::counts() const {
  WriteCounts c;
  c.units = units_.load();
  for (size_t i = 0; i < c.inputs.size(); ++i) c.inputs[i] = inputs_[i].load();
  c.decisions = decisions_.load();
  c.creates = creates_.load();
  c.record_bytes_estimate = sampled_bytes_.load() * kSampleEvery;
  return c;
}

Result<store::CommitResult> MeasuringLedger::Commit(store::UnitOfWork unit) {
  const int64_t from = from_nanos_.load();
  const int64_t until = until_nanos_.load();
  std::vector<int64_t> scheduled;
  const uint64_t decisions = unit.decisions.size();
  uint64_t creates = 0;
  for (const model::Decision& d : unit.decisions) {
    if (d.action != model::DecisionAction::kCreateJob) continue;
    ++creates;
    if (!d.scheduled_time) continue;
    const int64_t s = d.scheduled_time->UnixNanosSaturated();
    if (s >= from && s < until) scheduled.push_back(s);
  }
  std::array<uint64_t, 6> by_type{};
  for (const model::Input& in : unit.inputs) ++by_type[in.index()];
  const uint64_t unit_no = units_.fetch_add(1);
  if (unit_no % kSampleEvery == 0) {
    std::string buf;
    uint64_t bytes = 0;
    for (const model::Input& in : unit.inputs) {
      buf.clear();
      model::EncodeInput(in, &buf);
      bytes += buf.size();
    }
    for (const model::Decision& d : unit.decisions) {
      buf.clear();
      model::EncodeDecisionRecord(d, &buf);
      bytes += buf.size();
    }
    sampled_bytes_.fetch_add(bytes);
  }
  auto result = inner_->Commit(std::move(unit));
  if (!result.ok()) return result;
  decisions_.fetch_add(decisions);
  creates_.fetch_add(creates);
  for (size_t i = 0; i < by_type.size(); ++i) inputs_[i].fetch_add(by_type[i]);
  if (!scheduled.empty()) {
    const int64_t now = wall_.Now().UnixNanosSaturated();
    for (const int64_t s : scheduled) skew_.Add(now - s);
  }
  return result;
}

}  // namespace cronledger::bench
