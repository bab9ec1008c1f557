#include "model/sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define CRONLEDGER_SHA_NI 1
#endif

namespace cronledger::model {
namespace {

constexpr std::array<uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void PortableBlock(std::array<uint32_t, 8>* state, const uint8_t* p) {
  std::array<uint32_t, 8>& h_ = *state;
  std::array<uint32_t, 64> w;
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) |
           (uint32_t{p[4 * i + 2]} << 8) | uint32_t{p[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t s1 = Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25);
    const uint32_t ch = (e & f) ^ (~e & g);
    const uint32_t t1 = h + s1 + ch + kRound[i] + w[i];
    const uint32_t s0 = Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22);
    const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void PortableBlocks(std::array<uint32_t, 8>* state, const uint8_t* p, size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) PortableBlock(state, p);
}

#ifdef CRONLEDGER_SHA_NI
// The SHA extensions: the state is kept as the two lanes ABEF and CDGH that SHA256RNDS2 works on;
// each group of four rounds adds four message words to four round constants, and the message
// schedule is extended four words at a time (SHA256MSG1/MSG2), three groups ahead of its use.
__attribute__((target("sha,sse4.1,ssse3"))) void ShaNiBlocks(std::array<uint32_t, 8>* state,
                                                             const uint8_t* p, size_t blocks) {
  const __m128i kByteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state->data()));
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state->data() + 4));
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);          // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);  // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);       // CDGH
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef = state0;
    const __m128i cdgh = state1;
    __m128i m[4];
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) {
      if (g < 4) {
        m[g] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)),
                                kByteSwap);
      }
      __m128i msg = _mm_add_epi32(
          m[g % 4], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound.data() + 4 * g)));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      if (g >= 3 && g < 15) {
        const __m128i t = _mm_alignr_epi8(m[g % 4], m[(g + 3) % 4], 4);
        m[(g + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(g + 1) % 4], t), m[g % 4]);
      }
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
      if (g >= 1 && g < 13) m[(g - 1) % 4] = _mm_sha256msg1_epu32(m[(g - 1) % 4], m[g % 4]);
    }
    state0 = _mm_add_epi32(state0, abef);
    state1 = _mm_add_epi32(state1, cdgh);
  }
  tmp = _mm_shuffle_epi32(state0, 0x1B);        // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // ABEF
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state->data()), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state->data() + 4), state1);
}

bool DetectShaNi() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool ssse3 = (c & (1u << 9)) != 0;
  const bool sse41 = (c & (1u << 19)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  const bool sha = (b & (1u << 29)) != 0;
  return ssse3 && sse41 && sha;
}
#endif

}  // namespace

bool Sha256::HardwareAccelerated() {
#ifdef CRONLEDGER_SHA_NI
  static const bool available = DetectShaNi();
  return available;
#else
  return false;
#endif
}

Sha256::Sha256(Impl impl)
    : blocks_(&PortableBlocks), h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {
#ifdef CRONLEDGER_SHA_NI
  if (impl == Impl::kAuto && HardwareAccelerated()) blocks_ = &ShaNiBlocks;
#else
  (void)impl;
#endif
}

void Sha256::Update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  length_ += n;
  if (buffered_ > 0) {
    const size_t take = std::min(n, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    n -= take;
    if (buffered_ < buffer_.size()) return;
    blocks_(&h_, buffer_.data(), 1);
    buffered_ = 0;
  }
  const size_t whole = n / 64;
  if (whole > 0) blocks_(&h_, p, whole);
  p += whole * 64;
  n -= whole * 64;
  if (n > 0) std::memcpy(buffer_.data(), p, n);
  buffered_ = n;
}

namespace {

// The padding of a message of `length` bytes: 0x80, zeros up to 56 mod 64, then the length in
// bits, big-endian. Written at `out` (room for 72 bytes); returns how many bytes it wrote.
size_t WritePadding(uint64_t length, char* out) {
  const size_t rest = length % 64;
  const size_t pad = (rest < 56 ? 56 : 120) - rest;
  out[0] = static_cast<char>(0x80);
  std::memset(out + 1, 0, pad - 1);
  const uint64_t bits = length * 8;
  for (int i = 0; i < 8; ++i) out[pad + i] = static_cast<char>(bits >> (56 - 8 * i));
  return pad + 8;
}

}  // namespace

Sha256::Digest Sha256::Finish() {
  char tail[72];
  Update(std::string_view(tail, WritePadding(length_, tail)));
  return State();
}

Sha256::Digest Sha256::State() const {
  Digest out;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h_[i] >> (24 - 8 * j));
  }
  return out;
}

Sha256::Digest Sha256::HashPadding(std::string* message, Impl impl) {
  const size_t length = message->size();
  message->resize(length + 72);  // room for the padding Finish() writes
  message->resize(length + WritePadding(length, message->data() + length));
  Sha256 s(impl);
  s.blocks_(&s.h_, reinterpret_cast<const uint8_t*>(message->data()), message->size() / 64);
  return s.State();
}

Sha256::Digest Sha256::Hash(std::string_view bytes, Impl impl) {
  Sha256 s(impl);
  s.Update(bytes);
  return s.Finish();
}

std::string Sha256::Hex(const Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : d) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace cronledger::model
