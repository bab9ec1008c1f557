#pragma once

// Test helpers for store/ and its users: a ledger opener, a per-test temporary directory, a manual
// wall clock and watch-event builders. Test code only.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "model/inputs.h"
#include "store/ledger.h"

namespace cronledger::store::testing {

// Opens a test's ledger; a failed open is a test failure and gives nullptr.
inline std::unique_ptr<Ledger> OpenTestLedger(const LedgerOptions& options) {
  auto l = Ledger::Open(options);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() ? std::move(l).value() : nullptr;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it when destroyed.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cronledger-test-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A test's scratch ledger in `dir`, without fsyncs; a failed open is a test failure and gives
// nullptr.
inline std::unique_ptr<Ledger> OpenScratchLedger(const TempDir& dir) {
  LedgerOptions options;
  options.path = dir.Sub("ledger");
  options.sync = SyncMode::kNone;
  return OpenTestLedger(options);
}

class ManualClock final : public WallClock {
 public:
  explicit ManualClock(Time now) : now_(now) {}
  Time Now() const override { return now_; }
  void Set(Time t) { now_ = t; }
  void Advance(Duration d) { now_ = now_.Add(d); }

 private:
  Time now_;
};

inline std::string CronJobJson(const std::string& ns, const std::string& name,
                               const std::string& uid, const std::string& rv,
                               const std::string& schedule = "*/5 * * * *") {
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","uid":")" + uid + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"schedule":")" + schedule +
         R"(","jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}},"status":{}})";
}

inline std::string JobJson(const std::string& ns, const std::string& name, const std::string& uid,
                           const std::string& rv, const std::string& owner,
                           const std::string& owner_uid) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","uid":")" + uid + R"(","resourceVersion":")" + rv +
         R"(","ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":")" + owner +
         R"(","uid":")" + owner_uid + R"(","controller":true}]},"spec":{},"status":{}})";
}

inline model::WatchEvent CronJobEvent(model::WatchEventType type, const std::string& ns,
                                      const std::string& name, const std::string& uid,
                                      const std::string& rv) {
  return {type, model::ObjectKind::kCronJob,   "batch/v1", ns, name, uid, rv, "",
          "",   CronJobJson(ns, name, uid, rv)};
}

inline model::WatchEvent JobEvent(model::WatchEventType type, const std::string& ns,
                                  const std::string& name, const std::string& uid,
                                  const std::string& rv, const std::string& owner,
                                  const std::string& owner_uid = "owner-uid") {
  return {type,       model::ObjectKind::kJob,
          "batch/v1", ns,
          name,       uid,
          rv,         owner,
          owner_uid,  JobJson(ns, name, uid, rv, owner, owner_uid)};
}

}  // namespace cronledger::store::testing
