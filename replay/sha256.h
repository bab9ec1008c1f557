#pragma once

// SHA-256 (FIPS 180-4), written here so the replay digest needs no new dependency. Streaming:
// Update() any number of times, then Finish() once. Not thread-safe; cheap to copy.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cronledger::replay {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::string_view bytes);
  // The digest of everything updated so far. The object must not be updated afterwards.
  Digest Finish();

  // One-shot helpers.
  static Digest Hash(std::string_view bytes);
  static std::string Hex(const Digest& d);  // 64 lower-case hex digits

 private:
  void Block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

}  // namespace cronledger::replay
