// The replay engine's verifying half: the recorded decision stream of the replayed passes, the
// two digests, and the first divergence.

#include "replay/digest.h"
#include "replay/engine_internal.h"

namespace cronledger::replay::internal {

Status Engine::ReadRecorded(std::vector<model::Decision>* out) {
  return source_.ScanDecisions([&](const model::Decision& d) {
    out->push_back(d);
    return true;
  });
}

void Engine::SelectRecorded(std::vector<model::Decision>&& all) {
  const ReplayScope& scope = options_.scope;
  for (model::Decision& d : all) {
    ++result_.decisions_scanned;
    ++records_;
    Progress(false);
    const uint64_t tick = d.cause.tick_seq;
    // A decision of a replayed pass, or one that no pass of the log made (forged, or its Tick
    // lost) but that falls in the scope: both must match the derived stream.
    if (replayed_ticks_.count(tick) != 0 ||
        (all_ticks_.count(tick) == 0 && scope.Selects(d.cron_job.namespace_, d.cron_job.name) &&
         scope.InWindow(d.time) &&
         (!scope.selector ||
          label_selected_.count(FamilyKey(d.cron_job.namespace_, d.cron_job.name)) != 0))) {
      result_.recorded.push_back(std::move(d));
    }
  }
}

namespace {

std::optional<PassSummary> PassOfTick(const std::vector<PassSummary>& passes, uint64_t tick) {
  for (const PassSummary& p : passes) {
    if (p.tick_seq == tick) return p;
  }
  return std::nullopt;
}

}  // namespace

void Engine::Compare() {
  DecisionDigest derived_digest, recorded_digest;
  const auto& derived = result_.derived;
  auto& recorded = result_.recorded;
  const size_t n = std::max(derived.size(), recorded.size());
  std::optional<Divergence> first;
  std::string bytes;
  for (size_t i = 0; i < n; ++i) {
    if (i < derived.size() && i < recorded.size()) {
      // Equal records (seq aside) have equal canonical bytes: encode them once for both chains,
      // and while the chains are equal (equal streams so far) hash them once.
      model::Decision& r = recorded[i];
      const uint64_t seq = r.seq;
      r.seq = 0;
      const bool equal = r == derived[i];
      if (equal) {
        bytes.clear();
        model::AppendCanonicalDecisionBytes(r, &bytes);
        const bool same_chain = derived_digest == recorded_digest;
        derived_digest.AddBytes(bytes);
        if (same_chain) {
          recorded_digest = derived_digest;
        } else {
          recorded_digest.AddBytes(bytes);
        }
      }
      r.seq = seq;
      if (equal) continue;
    }
    std::string d = i < derived.size() ? DigestBytes(derived[i]) : std::string();
    std::string r = i < recorded.size() ? DigestBytes(recorded[i]) : std::string();
    if (i < derived.size()) derived_digest.AddBytes(d);
    if (i < recorded.size()) recorded_digest.AddBytes(r);
    if (i < derived.size() && i < recorded.size() && d == r) continue;
    ++result_.divergences;
    if (first) continue;
    first.emplace();
    first->index = i;
    if (i < recorded.size()) first->recorded = recorded[i];
    if (i < derived.size()) first->derived = derived[i];
    first->what = i >= derived.size()
                      ? "the recorded stream has a decision the replay did not derive"
                  : i >= recorded.size() ? "the replay derived a decision that was not recorded"
                                         : "the decisions differ";
    first->pass = i < derived.size()
                      ? std::optional<PassSummary>(result_.passes[result_.derived_pass[i]])
                      : PassOfTick(result_.passes, recorded[i].cause.tick_seq);
  }
  // A pass that did not replay exactly but whose decisions happen to match (e.g. only its
  // accounting state differs) is a divergence too; report whichever comes first in the stream.
  size_t before = 0;
  for (size_t p = 0, k = 0; p < result_.passes.size(); ++p) {
    before = k;
    while (k < result_.derived_pass.size() && result_.derived_pass[k] == p) ++k;
    if (result_.passes[p].problem.empty()) continue;
    if (!first || before < first->index) {
      first.emplace();
      first->index = before;
      if (before < recorded.size()) first->recorded = recorded[before];
      if (before < derived.size()) first->derived = derived[before];
      first->what = result_.passes[p].problem;
      first->pass = result_.passes[p];
    }
    break;
  }
  result_.derived_digest = {derived_digest.count(), derived_digest.Hex()};
  result_.recorded_digest = {recorded_digest.count(), recorded_digest.Hex()};
  result_.first_divergence = std::move(first);
}

}  // namespace cronledger::replay::internal
