#pragma once

// The replay digest (docs/replay.md, "Digest"): a SHA-256 chain over a decision stream.
//   h_0 = 32 zero bytes
//   h_i = SHA-256(h_{i-1} || be64(len(c_i)) || c_i),  c_i = CanonicalDecisionBytes(d_i) with
//   d_i.seq = 0
// The ledger's `seq` is a storage position assigned at commit, not part of what was decided; the
// chain fixes the order instead. Two streams have the same digest iff they hold the same decisions
// in the same order (up to SHA-256 collisions).

#include <cstdint>
#include <string>
#include <string_view>

#include "model/decision.h"
#include "model/sha256.h"

namespace cronledger::replay {

// The bytes a decision contributes to the digest (canonical JSON, seq cleared).
std::string DigestBytes(const model::Decision& d);

class DecisionDigest {
 public:
  DecisionDigest() { chain_.fill(0); }
  void Add(const model::Decision& d) { AddBytes(DigestBytes(d)); }
  void AddBytes(std::string_view canonical);
  // AddBytes(framed->substr(kFrame)): the canonical bytes written after kFrame reserved bytes of
  // *framed (whatever they hold). The chain and the length are written into those, the padding
  // after the bytes, and the message is hashed in one pass (no copies); *framed is left modified.
  static constexpr size_t kFrame = 40;
  void AddFramed(std::string* framed);
  uint64_t count() const { return count_; }
  std::string Hex() const { return model::Sha256::Hex(chain_); }
  // Same chain state: equal streams so far (up to SHA-256 collisions).
  friend bool operator==(const DecisionDigest&, const DecisionDigest&) = default;

 private:
  model::Sha256::Digest chain_;
  uint64_t count_ = 0;
};

}  // namespace cronledger::replay
