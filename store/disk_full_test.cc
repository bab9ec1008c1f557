// A full disk ends writing cleanly (docs/run.md "When the disk fills"): the failing commit and
// every later one get a clear error, nothing more reaches RocksDB (whose WAL writer asserts on a
// write after a failed one), the process can close the ledger, a reopen on the still-full disk
// fails the same way, and once space is freed the ledger resumes with exactly the units that were
// acknowledged. The disk is a small tmpfs, so this needs root (skipped otherwise).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using testing::CronJobEvent;
using testing::TempDir;

// A CronJob event whose raw JSON carries `bytes` of incompressible text (an annotation).
model::WatchEvent BigEvent(int i, size_t bytes, std::mt19937_64& rng) {
  const std::string name = "cj-" + std::to_string(i);
  model::WatchEvent e =
      CronJobEvent(model::WatchEventType::kAdded, "ns", name, "uid-" + name, std::to_string(i + 1));
  std::string filler;
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t k = 0; k < bytes; ++k) filler += kHex[rng() & 15];
  const size_t at = e.raw.find("\"metadata\":{") + std::strlen("\"metadata\":{");
  e.raw.insert(at, "\"annotations\":{\"filler\":\"" + filler + "\"},");
  return e;
}

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
    fs_ = dir_.Sub("fs");
    std::filesystem::create_directory(fs_);
    if (::mount("tmpfs", fs_.c_str(), "tmpfs", 0, "size=48m") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(fs_.c_str(), MNT_DETACH);
  }

  // Takes all but `leave` bytes of the free space with one file.
  void Fill(uint64_t leave) {
    struct statvfs st {};
    ASSERT_EQ(::statvfs(fs_.c_str(), &st), 0);
    const uint64_t free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    ASSERT_GT(free_bytes, leave);
    const int fd = ::open(Filler().c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::posix_fallocate(fd, 0, static_cast<off_t>(free_bytes - leave)), 0);
    ::close(fd);
  }
  std::string Filler() const { return fs_ + "/filler"; }
  std::string LedgerPath() const { return fs_ + "/ledger"; }

  TempDir dir_;
  std::string fs_;
  bool mounted_ = false;
};

TEST_F(DiskFullTest, WritingStopsWithAClearErrorAndResumesOnceSpaceIsFreed) {
  LedgerOptions options;
  options.path = LedgerPath();  // SyncMode::kBatch, the default: the background fsync runs too
  std::mt19937_64 rng(7);
  uint64_t acknowledged = 0;
  {
    auto ledger = testing::OpenTestLedger(options);
    ASSERT_NE(ledger, nullptr);
    Fill(2u << 20);
    Status failure;
    for (int i = 0; i < 4000 && failure.ok(); ++i) {
      UnitOfWork unit;
      unit.inputs.push_back(BigEvent(i, 16u << 10, rng));
      auto r = ledger->Commit(std::move(unit));
      if (r.ok()) {
        ++acknowledged;
      } else {
        failure = r.status();
      }
    }
    ASSERT_FALSE(failure.ok()) << "64 MiB written to a 2 MiB disk";
    EXPECT_EQ(failure.code(), Status::Code::kIoError) << failure.ToString();
    EXPECT_NE(failure.message().find("the disk is full"), std::string::npos) << failure.ToString();
    EXPECT_GT(acknowledged, 0u);
    // Sticky: nothing more is attempted, and the health says why.
    UnitOfWork more;
    more.inputs.push_back(BigEvent(9999, 16, rng));
    Status again = ledger->Commit(std::move(more)).status();
    EXPECT_FALSE(again.ok());
    EXPECT_NE(again.message().find("the disk is full"), std::string::npos) << again.ToString();
    EXPECT_FALSE(ledger->WriteHealth().ok());
  }  // closing after the failure must not abort

  // Still full: a reopen either fails, or refuses the first commit with the same clear error, or
  // (RocksDB gives back the log space it had preallocated when it closes) takes it durably.
  {
    auto reopened = Ledger::Open(options);
    if (reopened.ok()) {
      UnitOfWork unit;
      unit.inputs.push_back(BigEvent(5000, 16u << 10, rng));
      auto r = (*reopened)->Commit(std::move(unit));
      if (r.ok()) {
        ++acknowledged;
      } else {
        EXPECT_NE(r.status().message().find("the disk is full"), std::string::npos)
            << r.status().ToString();
      }
    } else {
      EXPECT_NE(reopened.status().message().find("the disk is full"), std::string::npos)
          << reopened.status().ToString();
    }
  }

  // Space freed: the ledger holds exactly the acknowledged units and takes new ones.
  ASSERT_TRUE(std::filesystem::remove(Filler()));
  auto ledger = testing::OpenTestLedger(options);
  ASSERT_NE(ledger, nullptr);
  uint64_t inputs = 0;
  ASSERT_TRUE(ledger
                  ->ScanInputs(1, false,
                               [&](const LogRecord&) {
                                 ++inputs;
                                 return true;
                               })
                  .ok());
  EXPECT_EQ(inputs, acknowledged);
  UnitOfWork unit;
  unit.inputs.push_back(BigEvent(6000, 16, rng));
  auto r = ledger->Commit(std::move(unit));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first_input_seq, acknowledged + 1);
  EXPECT_TRUE(ledger->WriteHealth().ok());
}

}  // namespace
}  // namespace cronledger::store
