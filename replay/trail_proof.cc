// Inclusion proofs of decisions (replay/trail.h, replay/merkle.h).
#include "model/decision.h"
#include "model/inputs.h"
#include "model/json.h"
#include "replay/bundle.h"
#include "replay/merkle.h"
#include "replay/trail.h"
#include "replay/trail_internal.h"

namespace cronledger::replay::trail {
namespace {

namespace st = store::trail;

// Calls add(index, leaf) for the chain's kept leaves in seq order; `at` receives the index and
// entry of `seq` when it is among them.
Status ScanLeaves(store::Ledger& ledger, const ChainHead& chain,
                  const std::function<bool(uint64_t, uint64_t, const st::TrailEntry&)>& add) {
  EntryCursor entries(ledger, chain.log);
  for (uint64_t index = 0;; ++index) {
    CL_ASSIGN_OR_RETURN(auto next, entries.Peek());
    if (next == nullptr) return Status::Ok();
    if (!add(index, next->first, next->second)) return Status::Ok();
    entries.Take();
  }
}

Result<model::Json> DecodedDecision(uint64_t seq, std::string_view record) {
  auto d = model::DecodeDecisionRecord(record);
  if (!d.ok()) {
    return Status::Corruption("decision " + std::to_string(seq) +
                              " does not decode: " + d.status().message());
  }
  return model::EncodeDecision(*d);
}

}  // namespace

Result<InclusionProof> ProveDecision(store::Ledger& ledger, const ChainHead& chain, uint64_t seq) {
  if (chain.log != st::kDecisionsLog) {
    return Status::InvalidArgument("a proof is of a decision; the chain is of " + chain.log);
  }
  if (!chain.tree_head) {
    return Status::FailedPrecondition(
        "the checkpoint has no tree head (\"treeHead\"): it was taken before the trail kept its "
        "Merkle tree; take a new checkpoint");
  }
  if (seq < chain.first_seq || seq > chain.last_seq) {
    return Status::NotFound("the checkpoint covers decisions " + std::to_string(chain.first_seq) +
                            " to " + std::to_string(chain.last_seq) + ", not " +
                            std::to_string(seq));
  }
  InclusionProof p;
  p.copy_of = chain.copy_of;
  p.source = chain.source;
  p.log = chain.log;
  p.seq = seq;
  p.tree_size = chain.records;
  p.tree_head = *chain.tree_head;
  std::optional<st::TrailEntry> entry;
  CL_RETURN_IF_ERROR(
      ScanLeaves(ledger, chain, [&](uint64_t index, uint64_t s, const st::TrailEntry& e) {
        if (s == seq) {
          p.leaf_index = index;
          entry = e;
        }
        return s < seq;
      }));
  if (!entry) {
    return Status::FailedPrecondition("the trail keeps no leaf for decision " +
                                      std::to_string(seq) + ": it was removed from the store");
  }
  if (entry->removed_by_retention) {
    return Status::FailedPrecondition("decision " + std::to_string(seq) +
                                      " was removed by retention: only its leaf remains");
  }
  CL_RETURN_IF_ERROR(ledger.ScanDecisionBytes(seq, [&](uint64_t s, std::string_view bytes) {
    if (s == seq) p.record = std::string(bytes);
    return false;
  }));
  if (DecisionLeaf(seq, p.record) != entry->leaf) {
    return Status::Corruption("decision " + std::to_string(seq) +
                              ": its bytes differ from those the trail chained");
  }
  CL_ASSIGN_OR_RETURN(
      merkle::Proof proof, merkle::ProveInclusion(p.leaf_index, p.tree_size, [&](const auto& add) {
        return ScanLeaves(ledger, chain, [&](uint64_t index, uint64_t, const st::TrailEntry& e) {
          return add(index, e.leaf);
        });
      }));
  if (proof.root != p.tree_head) {
    return Status::FailedPrecondition(
        "the store's trail does not give the checkpoint's tree head: its kept leaves changed "
        "since the checkpoint (run verify-trail)");
  }
  p.path = std::move(proof.path);
  return p;
}

model::Json ProofDecision(const InclusionProof& p) {
  auto decision = DecodedDecision(p.seq, p.record);
  return decision.ok() ? *decision : model::Json(nullptr);
}

model::Json ProofJson(const InclusionProof& p) {
  model::Json path = model::Json::array();
  for (const Hash& h : p.path) path.push_back(Hex(h));
  model::Json j = {{"format", kProofFormat}};
  if (p.copy_of) j["copyOf"] = *p.copy_of;
  j["source"] = p.source;
  j["log"] = p.log;
  j["seq"] = p.seq;
  j["leafIndex"] = p.leaf_index;
  j["treeSize"] = p.tree_size;
  j["treeHead"] = Hex(p.tree_head);
  j["record"] = Base64Encode(p.record);
  j["decision"] = ProofDecision(p);
  j["auditPath"] = std::move(path);
  return j;
}

Result<InclusionProof> ParseProof(std::string_view text) {
  auto j = model::ParseJson(text);
  if (!j.ok()) return Status::InvalidArgument("proof: " + j.status().message());
  if (!j->is_object() || model::StringOr(*j, "format") != kProofFormat) {
    return Status::InvalidArgument(std::string("proof: want \"format\": \"") +
                                   std::string(kProofFormat) + "\"");
  }
  auto u64 = [&](const char* name) -> Result<uint64_t> {
    const model::Json v = model::MemberOr(*j, name);
    if (!v.is_number_unsigned()) {
      return Status::InvalidArgument(std::string("proof: want \"") + name + "\" as a whole number");
    }
    return v.get<uint64_t>();
  };
  auto hash = [&](const model::Json& v, const std::string& what) -> Result<Hash> {
    if (!v.is_string()) return Status::InvalidArgument("proof: want " + what + " as 64 hex digits");
    auto h = ParseHex(v.get<std::string>());
    if (!h.ok()) return Status::InvalidArgument("proof: " + what + ": " + h.status().message());
    return *h;
  };
  InclusionProof p;
  if (j->contains("copyOf")) {
    if (!(*j)["copyOf"].is_string())
      return Status::InvalidArgument("proof: want \"copyOf\" as a source id");
    p.copy_of = (*j)["copyOf"].get<std::string>();
  }
  p.source = model::StringOr(*j, "source");
  p.log = model::StringOr(*j, "log");
  if (p.log != st::kDecisionsLog)
    return Status::InvalidArgument("proof: want \"log\": \"decisions\"");
  CL_ASSIGN_OR_RETURN(p.seq, u64("seq"));
  CL_ASSIGN_OR_RETURN(p.leaf_index, u64("leafIndex"));
  CL_ASSIGN_OR_RETURN(p.tree_size, u64("treeSize"));
  CL_ASSIGN_OR_RETURN(p.tree_head, hash(model::MemberOr(*j, "treeHead"), "\"treeHead\""));
  auto record = Base64Decode(model::StringOr(*j, "record"));
  if (!record.ok() || record->empty()) {
    return Status::InvalidArgument("proof: want \"record\" as the record's bytes in base64");
  }
  p.record = std::move(*record);
  const model::Json path = model::MemberOr(*j, "auditPath");
  if (!path.is_array()) return Status::InvalidArgument("proof: want \"auditPath\" as a list");
  for (size_t i = 0; i < path.size(); ++i) {
    CL_ASSIGN_OR_RETURN(Hash h, hash(path[i], "auditPath[" + std::to_string(i) + "]"));
    p.path.push_back(h);
  }
  auto decoded = DecodedDecision(p.seq, p.record);
  if (!decoded.ok()) return Status::InvalidArgument("proof: " + decoded.status().message());
  if (model::MemberOr(*j, "decision") != *decoded) {
    return Status::InvalidArgument(
        "proof: \"decision\" is not what its record says (the readable part was edited)");
  }
  return p;
}

Status VerifyProof(const InclusionProof& proof, const Checkpoint& checkpoint) {
  const ChainHead* chain = nullptr;
  for (const ChainHead& c : checkpoint.chains) {
    if (c.copy_of == proof.copy_of && c.source == proof.source && c.log == proof.log) chain = &c;
  }
  const std::string of = proof.copy_of ? " of source " + *proof.copy_of : std::string();
  if (chain == nullptr) {
    return Status::FailedPrecondition("the checkpoint has no chain of " + proof.log + of);
  }
  if (!chain->tree_head) {
    return Status::FailedPrecondition("the checkpoint's chain has no tree head (\"treeHead\")");
  }
  if (chain->records != proof.tree_size || *chain->tree_head != proof.tree_head) {
    return Status::FailedPrecondition(
        "the proof is for a tree of " + std::to_string(proof.tree_size) + " leaves with head " +
        Hex(proof.tree_head) + "; the checkpoint's is " + std::to_string(chain->records) +
        " leaves with head " + Hex(*chain->tree_head) + ": prove against this checkpoint");
  }
  if (!merkle::VerifyInclusion(proof.leaf_index, proof.tree_size,
                               DecisionLeaf(proof.seq, proof.record), proof.path,
                               *chain->tree_head)) {
    return Status::FailedPrecondition("the audit path does not lead from decision " +
                                      std::to_string(proof.seq) + " (leaf " +
                                      std::to_string(proof.leaf_index) +
                                      ") to the checkpoint's tree head: the record, its seq, "
                                      "its position or the path differ from what the trail holds");
  }
  return Status::Ok();
}

}  // namespace cronledger::replay::trail
