// VerifySources (replay/trail.h): a checkpoint of an audit store against its copies or sections.
#include <map>
#include <set>

#include "replay/trail.h"
#include "replay/trail_internal.h"

namespace cronledger::replay::trail {

Status RejectMergedCheckpoint(const Checkpoint& checkpoint) {
  for (const ChainHead& c : checkpoint.chains) {
    if (c.copy_of) {
      return Status::InvalidArgument(
          "the checkpoint covers the copies of an audit store (copyOf \"" + *c.copy_of +
          "\"): check it against the audit store or a bundle set exported from it");
    }
  }
  return Status::Ok();
}

Result<TrailVerdict> VerifySources(
    const Checkpoint& checkpoint, const std::vector<std::string>& present,
    const std::function<Result<TrailVerdict>(const std::string& source, const Checkpoint&)>&
        verify) {
  // The checkpoint's chains by source, in the order it lists them.
  std::vector<std::string> order;
  std::map<std::string, Checkpoint> by_source;
  for (const ChainHead& c : checkpoint.chains) {
    if (!c.copy_of) {
      return Status::InvalidArgument(
          "the checkpoint is one ledger's (its chains name no \"copyOf\"): check it against that "
          "ledger, or the source's copy (--data-dir D/sources/<source>)");
    }
    auto [it, added] = by_source.try_emplace(*c.copy_of);
    if (added) {
      order.push_back(*c.copy_of);
      it->second.taken_at = checkpoint.taken_at;
    }
    ChainHead own = c;
    own.copy_of.reset();
    it->second.chains.push_back(std::move(own));
  }
  const std::set<std::string> have(present.begin(), present.end());
  TrailVerdict out;
  for (const std::string& source : order) {
    const Checkpoint& own = by_source[source];
    if (have.count(source) == 0) {
      for (const ChainHead& c : own.chains) {
        ChainVerdict v;
        v.copy_of = source;
        v.source = c.source;
        v.log = c.log;
        v.problem = TrailProblem{ProblemKind::kRemoved, c.first_seq, 0, "",
                                 "no copy of source \"" + source + "\" is left (" +
                                     std::to_string(c.records) + " records the checkpoint covers)"};
        out.chains.push_back(std::move(v));
      }
      continue;
    }
    CL_ASSIGN_OR_RETURN(TrailVerdict v, verify(source, own));
    for (ChainVerdict& c : v.chains) {
      c.copy_of = source;
      out.chains.push_back(std::move(c));
    }
    for (const std::string& note : v.notes) out.notes.push_back("source " + source + ": " + note);
  }
  for (const std::string& source : present) {
    if (by_source.count(source) == 0) {
      out.notes.push_back("source " + source +
                          ": not covered by the checkpoint (its first records came after it)");
    }
  }
  return out;
}

}  // namespace cronledger::replay::trail
