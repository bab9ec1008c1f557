// SHA-256 against the NIST FIPS 180-4 examples and the digest chain's definition.

#include "model/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "replay/digest.h"

namespace cronledger::replay {
namespace {

using model::Sha256;

struct Vector {
  std::string message;
  std::string digest;
};

TEST(Sha256, NistVectors) {
  const Vector kVectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrl"
       "mnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const Vector& v : kVectors) {
    // kAuto is the SHA-NI code where the CPU has it (reported below), kPortable never is.
    EXPECT_EQ(Sha256::Hex(Sha256::Hash(v.message)), v.digest) << v.message.size() << " bytes";
    EXPECT_EQ(Sha256::Hex(Sha256::Hash(v.message, Sha256::Impl::kPortable)), v.digest)
        << v.message.size() << " bytes";
  }
  RecordProperty("sha_ni", Sha256::HardwareAccelerated() ? "yes" : "no");
}

TEST(Sha256, AcceleratedEqualsPortableOnEveryLength) {
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 1100; ++i) {
    x = x * 1103515245u + 12345u;
    data.push_back(static_cast<char>(x >> 24));
  }
  for (size_t n = 0; n <= data.size(); ++n) {
    const std::string_view m = std::string_view(data).substr(0, n);
    ASSERT_EQ(Sha256::Hash(m), Sha256::Hash(m, Sha256::Impl::kPortable)) << n;
  }
}

TEST(Sha256, StreamingEqualsOneShotAtEveryBlockBoundary) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 7));
  const auto whole = Sha256::Hash(data);
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    for (Sha256::Impl impl : {Sha256::Impl::kAuto, Sha256::Impl::kPortable}) {
      Sha256 s(impl);
      s.Update(std::string_view(data).substr(0, cut));
      s.Update(std::string_view(data).substr(cut));
      ASSERT_EQ(s.Finish(), whole) << cut;
    }
  }
}

TEST(DecisionDigest, ChainDefinitionAndOrderSensitivity) {
  // h1 = SHA-256(32 zero bytes || be64(3) || "abc"), computed independently of the class.
  std::string input(32, '\0');
  input += std::string("\0\0\0\0\0\0\0\3", 8);
  input += "abc";
  DecisionDigest d;
  d.AddBytes("abc");
  EXPECT_EQ(d.Hex(), Sha256::Hex(Sha256::Hash(input)));
  EXPECT_EQ(d.count(), 1u);

  DecisionDigest ab, ba;
  ab.AddBytes("a");
  ab.AddBytes("b");
  ba.AddBytes("b");
  ba.AddBytes("a");
  EXPECT_NE(ab.Hex(), ba.Hex());
  DecisionDigest empty;
  EXPECT_EQ(empty.Hex(), std::string(64, '0'));
}

TEST(DecisionDigest, SeqIsNotPartOfTheDigestButEveryOtherFieldIs) {
  model::Decision a;
  a.time = Time::FromUnix(1704067200);
  a.cron_job = {"default", "x", "uid"};
  a.action = model::DecisionAction::kSkipped;
  a.reason = "TooLate";
  model::Decision b = a;
  b.seq = 42;
  EXPECT_EQ(DigestBytes(a), DigestBytes(b));
  b.reason = "Suspended";
  EXPECT_NE(DigestBytes(a), DigestBytes(b));
}

TEST(Sha256, HashPaddingEqualsHashOnEveryLength) {
  for (const Sha256::Impl impl : {Sha256::Impl::kAuto, Sha256::Impl::kPortable}) {
    for (size_t n = 0; n <= 300; ++n) {
      std::string m;
      for (size_t i = 0; i < n; ++i) m.push_back(static_cast<char>(i * 37 + n));
      const Sha256::Digest want = Sha256::Hash(m, impl);
      std::string padded = m;
      ASSERT_EQ(Sha256::HashPadding(&padded, impl), want) << n;
      ASSERT_EQ(padded.size() % 64, 0u);
      ASSERT_EQ(padded.substr(0, n), m);
    }
  }
}

// The framed chain step is the chain step: same chain over a stream of canonical byte strings of
// every length around the block boundaries, whatever the reserved bytes held.
TEST(DecisionDigest, FramedEqualsAddBytes) {
  DecisionDigest plain, framed;
  std::string buf;
  for (size_t n = 0; n <= 260; ++n) {
    std::string canonical;
    for (size_t i = 0; i < n; ++i) canonical.push_back(static_cast<char>('a' + (i * 7 + n) % 26));
    plain.AddBytes(canonical);
    buf.assign(DecisionDigest::kFrame, static_cast<char>(n));
    buf += canonical;
    framed.AddFramed(&buf);
    ASSERT_EQ(framed, plain) << n;
  }
  EXPECT_EQ(framed.Hex(), plain.Hex());
  EXPECT_EQ(framed.count(), 261u);
}

}  // namespace
}  // namespace cronledger::replay
