#pragma once

// SHA-256 (FIPS 180-4), written here so the replay digest and the store's chunk ids need no new
// dependency. Streaming: Update() any number of times, then Finish() once. Not thread-safe; cheap
// to copy.
//
// Two block functions compute the same thing: the x86 SHA extensions (SHA-NI, used when the CPU
// reports them, detected once at run time) and portable C++ (everything else, and on request).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cronledger::model {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  enum class Impl {
    kAuto,      // SHA-NI when the CPU has it, else portable
    kPortable,  // always the portable code (tests compare the two)
  };

  explicit Sha256(Impl impl = Impl::kAuto);
  // True when kAuto uses the SHA extensions on this CPU.
  static bool HardwareAccelerated();
  void Update(std::string_view bytes);
  // The digest of everything updated so far. The object must not be updated afterwards.
  Digest Finish();

  // One-shot helpers.
  static Digest Hash(std::string_view bytes, Impl impl = Impl::kAuto);
  static std::string Hex(const Digest& d);  // 64 lower-case hex digits
  // Hash(*message), the padding appended to *message in place (it is left padded) and every
  // block hashed straight from it: no copy through the streaming buffer.
  static Digest HashPadding(std::string* message, Impl impl = Impl::kAuto);

 private:
  using BlocksFn = void (*)(std::array<uint32_t, 8>* h, const uint8_t* p, size_t blocks);

  Digest State() const;

  BlocksFn blocks_;
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

}  // namespace cronledger::model
