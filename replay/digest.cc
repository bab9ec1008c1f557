#include "replay/digest.h"

#include <cstring>
#include <string_view>

namespace cronledger::replay {

std::string DigestBytes(const model::Decision& d) {
  if (d.seq == 0) return model::CanonicalDecisionBytes(d);
  model::Decision copy = d;
  copy.seq = 0;
  return model::CanonicalDecisionBytes(copy);
}

void DecisionDigest::AddBytes(std::string_view canonical) {
  Sha256 h;
  h.Update(std::string_view(reinterpret_cast<const char*>(chain_.data()), chain_.size()));
  char len[8];
  const uint64_t n = canonical.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(n >> (56 - 8 * i));
  h.Update(std::string_view(len, 8));
  h.Update(canonical);
  chain_ = h.Finish();
  ++count_;
}

void DecisionDigest::AddFramed(std::string* framed) {
  const uint64_t n = framed->size() - kFrame;
  char* p = framed->data();
  std::memcpy(p, chain_.data(), chain_.size());
  for (int i = 0; i < 8; ++i) p[32 + i] = static_cast<char>(n >> (56 - 8 * i));
  chain_ = Sha256::HashPadding(framed);
  ++count_;
}

}  // namespace cronledger::replay
