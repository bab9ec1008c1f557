// ChainChecker (replay/trail_internal.h).
#include "replay/trail_internal.h"

namespace cronledger::replay::trail {

ChainChecker::ChainChecker(const ChainHead& chain)
    : chain_(chain), head_(Genesis(chain.source, chain.log)) {
  verdict_.source = chain.source;
  verdict_.log = chain.log;
}

void ChainChecker::Problem(ProblemKind kind, const TrailItem& item, std::string detail) {
  if (first_) return;
  first_ = TrailProblem{kind, item.seq, 0, item.name, std::move(detail)};
}

bool ChainChecker::WantsName(uint64_t seq) const {
  return first_ && first_->seq == seq && first_->kind != ProblemKind::kRemoved;
}

void ChainChecker::Add(const TrailItem& item) {
  if (item.seq > chain_.last_seq) {
    if (item.recomputed) ++verdict_.not_covered;
    return;
  }
  const bool repeated = prev_seq_ && item.seq <= *prev_seq_;
  if (altered_claimed_ && first_ && prev_seq_ && item.seq == *prev_seq_ + 1) {
    if (item.leaf_at && item.leaf_at(*prev_seq_) == *altered_claimed_) {
      first_->kind = ProblemKind::kInserted;
      first_->detail =
          "it was inserted before the record the trail chained at this seq, and "
          "the records after it were renumbered";
    } else if (item.claimed && altered_as_next_ && *altered_as_next_ == item.claimed->leaf) {
      first_->kind = ProblemKind::kRemoved;
      first_->record.clear();
      first_->detail =
          "the record the trail chained at this seq is gone, and the records after "
          "it were renumbered";
    }
  }
  altered_claimed_.reset();
  altered_as_next_.reset();
  if (prev_seq_ && item.seq > *prev_seq_ + 1 && !gap_) gap_ = *prev_seq_ + 1;
  if (!prev_seq_ && item.seq > chain_.first_seq && !gap_) gap_ = chain_.first_seq;
  Hash leaf;
  if (item.recomputed) {
    leaf = *item.recomputed;
    if (repeated) {
      Problem(ProblemKind::kInserted, item, "its seq does not follow the record before it");
    } else if (!item.claimed) {
      Problem(ProblemKind::kInserted, item, "the trail has no entry for it");
    } else if (*item.recomputed != item.claimed->leaf) {
      if (!first_) {
        altered_claimed_ = item.claimed->leaf;
        if (item.leaf_at) altered_as_next_ = item.leaf_at(item.seq + 1);
      }
      Problem(ProblemKind::kAltered, item, "its bytes differ from those the trail chained");
    }
  } else if (item.claimed && item.claimed->removed_by_retention) {
    leaf = item.claimed->leaf;
    ++verdict_.removed_by_retention;
  } else {
    Problem(ProblemKind::kRemoved, item, "the trail chained it and the record is gone");
    return;
  }
  head_ = Chain(head_, leaf);
  if (chain_.tree_head) tree_.Append(leaf);
  ++count_;
  prev_seq_ = item.seq;
  if (count_ % chain_.mark_every != 0 || next_mark_ >= chain_.marks.size()) return;
  const store::trail::TrailMark& mark = chain_.marks[next_mark_++];
  if (mark.seq == item.seq && mark.head == head_) {
    segment_start_ = item.seq;
    gap_.reset();
  } else if (!diverged_) {
    TrailProblem p{ProblemKind::kUnlocated, mark.seq, segment_start_, "", ""};
    if (gap_) p = {ProblemKind::kRemoved, *gap_, 0, "", "the record and its trail entry are gone"};
    diverged_ = p;
  }
}

ChainVerdict ChainChecker::Finish(const std::map<uint64_t, std::string>& names) {
  verdict_.verified = count_;
  const bool matches = count_ == chain_.records && head_ == chain_.head &&
                       (count_ == 0 || prev_seq_ == chain_.last_seq);
  verdict_.intact = matches && !first_ && !diverged_;
  if (verdict_.intact && chain_.tree_head && tree_.Root() != *chain_.tree_head) {
    // Every record is as the chain says, but the checkpoint's tree is of other records: proofs
    // checked against it would not be about this trail.
    verdict_.intact = false;
    verdict_.problem =
        TrailProblem{ProblemKind::kTreeHead, chain_.last_seq, 0, "",
                     "the checkpoint's treeHead is not the Merkle tree of the records its chain "
                     "covers: proofs checked against it are not about this trail"};
    return verdict_;
  }
  if (verdict_.intact) return verdict_;
  std::optional<TrailProblem> p = first_;
  if (diverged_ && (!p || p->seq > diverged_->seq)) p = diverged_;
  if (!p) {
    // The stretch after the last mark that matched.
    if (gap_) {
      p = TrailProblem{ProblemKind::kRemoved, *gap_, 0, "",
                       "the record and its trail entry are gone"};
    } else if (!prev_seq_ || *prev_seq_ < chain_.last_seq) {
      const uint64_t from = prev_seq_ ? *prev_seq_ + 1 : chain_.first_seq;
      p = TrailProblem{
          ProblemKind::kRemoved, from, 0, "",
          "the records from here through seq " + std::to_string(chain_.last_seq) + " are gone"};
    } else {
      p = TrailProblem{ProblemKind::kUnlocated, chain_.last_seq, segment_start_, "", ""};
    }
  }
  if (p->kind == ProblemKind::kUnlocated) {
    p->detail = "a record with seq in (" + std::to_string(p->from_seq) + ", " +
                std::to_string(p->seq) +
                "] differs from the checkpoint, and the trail's entries were rewritten to match";
  }
  const std::string singular = chain_.log == store::trail::kInputsLog ? "input " : "decision ";
  if (auto it = names.find(p->seq); it != names.end() && p->kind != ProblemKind::kRemoved) {
    p->record = it->second;
  } else if (p->record.empty() && p->kind != ProblemKind::kUnlocated) {
    p->record = singular + std::to_string(p->seq);
  }
  verdict_.problem = std::move(p);
  return verdict_;
}

std::string_view ProblemKindName(ProblemKind k) {
  switch (k) {
    case ProblemKind::kAltered:
      return "altered";
    case ProblemKind::kRemoved:
      return "removed";
    case ProblemKind::kInserted:
      return "inserted";
    case ProblemKind::kUnlocated:
      return "altered-range";
    case ProblemKind::kTreeHead:
      return "tree-head";
  }
  return "altered";
}

bool TrailVerdict::intact() const {
  for (const ChainVerdict& c : chains) {
    if (!c.intact) return false;
  }
  return !chains.empty();
}

model::Json VerdictJson(const TrailVerdict& v) {
  model::Json items = model::Json::array();
  for (const ChainVerdict& c : v.chains) {
    model::Json j = {{"source", c.source},
                     {"log", c.log},
                     {"intact", c.intact},
                     {"verified", c.verified},
                     {"removedByRetention", c.removed_by_retention},
                     {"notCovered", c.not_covered},
                     {"problem", nullptr}};
    if (c.copy_of) j["copyOf"] = *c.copy_of;
    if (c.problem) {
      j["problem"] = {{"kind", ProblemKindName(c.problem->kind)},
                      {"seq", c.problem->seq},
                      {"record", c.problem->record},
                      {"detail", c.problem->detail}};
      if (c.problem->kind == ProblemKind::kUnlocated)
        j["problem"]["afterSeq"] = c.problem->from_seq;
    }
    items.push_back(std::move(j));
  }
  return {{"intact", v.intact()}, {"notes", v.notes}, {"items", std::move(items)}};
}

}  // namespace cronledger::replay::trail
