#include "bench/controller/measuring_ledger.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
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

std::vector<uint64_t> MeasuringLedger::create_input_seqs() const {
  std::lock_guard<std::mutex> l(capture_mu_);
  return create_input_seqs_;
}

std::vector<uint64_t> MeasuringLedger::create_decision_seqs() const {
  std::lock_guard<std::mutex> l(capture_mu_);
  return create_decision_seqs_;
}

std::vector<double> MeasuringLedger::burst_seconds() const {
  std::lock_guard<std::mutex> l(capture_mu_);
  std::vector<double> out;
  for (const int64_t n : burst_nanos_) out.push_back(static_cast<double>(n) / 1e9);
  return out;
}

Result<store::CommitResult> MeasuringLedger::Commit(store::UnitOfWork unit) {
  const int64_t from = from_nanos_.load();
  const int64_t until = until_nanos_.load();
  std::vector<int64_t> scheduled;
  std::vector<size_t> scheduled_index;  // positions of those decisions in the unit
  const uint64_t decisions = unit.decisions.size();
  uint64_t creates = 0;
  for (size_t i = 0; i < unit.decisions.size(); ++i) {
    const model::Decision& d = unit.decisions[i];
    if (d.action != model::DecisionAction::kCreateJob) continue;
    ++creates;
    if (!d.scheduled_time) continue;
    const int64_t s = d.scheduled_time->UnixNanosSaturated();
    if (s >= from && s < until) {
      scheduled.push_back(s);
      scheduled_index.push_back(i);
    }
  }
  std::array<uint64_t, 6> by_type{};
  bool create_intent = false;
  for (const model::Input& in : unit.inputs) {
    ++by_type[in.index()];
    if (const auto* intent = std::get_if<model::ActionIntent>(&in)) {
      const int64_t t = intent->time.UnixNanosSaturated();
      if (intent->verb == "create" && intent->kind == model::ObjectKind::kJob && t >= from &&
          t < until) {
        create_intent = true;
      }
    }
  }
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
  if (!scheduled.empty() || create_intent) {
    const int64_t now = wall_.Now().UnixNanosSaturated();
    std::lock_guard<std::mutex> l(capture_mu_);
    if (create_intent) {
      for (uint64_t seq = result->first_input_seq; seq != 0 && seq <= result->last_input_seq;
           ++seq) {
        create_input_seqs_.push_back(seq);
      }
    }
    for (size_t k = 0; k < scheduled.size(); ++k) {
      create_decision_seqs_.push_back(result->first_decision_seq + scheduled_index[k]);
      const auto minute = static_cast<size_t>((scheduled[k] - from) / 60'000'000'000);
      if (burst_nanos_.size() <= minute) burst_nanos_.resize(minute + 1, 0);
      burst_nanos_[minute] = std::max(burst_nanos_[minute], now - scheduled[k]);
    }
  }
  return result;
}

}  // namespace cronledger::bench
