#include "replay/digest.h"

#include <cstring>
#include <string_view>

namespace cronledger::replay {
namespace {

// be64(n) of the chain definition (digest.h).
void StoreBe64(uint64_t n, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (56 - 8 * i));
}

}  // namespace

std::string DigestBytes(const model::Decision& d) {
  if (d.seq == 0) return model::CanonicalDecisionBytes(d);
  model::Decision copy = d;
  copy.seq = 0;
  return model::CanonicalDecisionBytes(copy);
}

void DecisionDigest::AddBytes(std::string_view canonical) {
  model::Sha256 h;
  h.Update(std::string_view(reinterpret_cast<const char*>(chain_.data()), chain_.size()));
  char len[8];
  StoreBe64(canonical.size(), len);
  h.Update(std::string_view(len, 8));
  h.Update(canonical);
  chain_ = h.Finish();
  ++count_;
}

void DecisionDigest::AddFramed(std::string* framed) {
  char* p = framed->data();
  std::memcpy(p, chain_.data(), chain_.size());
  StoreBe64(framed->size() - kFrame, p + chain_.size());
  chain_ = model::Sha256::HashPadding(framed);
  ++count_;
}

}  // namespace cronledger::replay
