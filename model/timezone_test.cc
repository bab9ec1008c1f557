#include "model/timezone.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "model/time.h"
#include "model/timezone_version.h"
#include "tests/schedule/tzdata.h"

namespace cronledger::model {
namespace {

// The expected instants hold for the shipped tz database release, not for whatever the host has.
const SystemTimeZoneDbOptions& DbOptions() {
  static const auto* options = new SystemTimeZoneDbOptions(tzdata_test::TestTzdataOptions());
  return *options;
}

std::unique_ptr<TimeZoneDb> Db() {
  auto db = OpenSystemTimeZoneDb(DbOptions());
  CL_CHECK(db.ok());
  return std::move(db).value();
}

int64_t At(const char* rfc3339) { return ParseRfc3339(rfc3339)->unix_seconds(); }

TEST(TimeZoneTest, ReadsTheShippedRelease) {
  auto version = ReadTzdataVersion(DbOptions().zoneinfo_dir);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, tzdata_test::kTestTzdataRelease);
}

// A scratch zoneinfo directory holding only a tzdata.zi with `content` (nullptr: no such file).
class ScratchZoneinfo {
 public:
  explicit ScratchZoneinfo(const char* content) {
    std::string pattern = ::testing::TempDir() + "zoneinfo-XXXXXX";
    CL_CHECK(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    if (content != nullptr) std::ofstream(dir_ + "/tzdata.zi") << content;
  }
  ~ScratchZoneinfo() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

TEST(TimeZoneTest, TzdataVersionFromTheFirstLine) {
  constexpr const char* kNoVersionLine = "/tzdata.zi does not start with a \"# version\" line";
  struct Case {
    const char* content;  // nullptr: no tzdata.zi
    const char* release;  // nullptr: an error is expected
    const char* error;    // the error message after the directory name
  };
  const Case cases[] = {
      {"# version 2026f\n# This zic input file is in the public domain.\nR d 1916 o -\n", "2026f",
       nullptr},
      {"# version 2025b", "2025b", nullptr},
      {nullptr, nullptr, "/tzdata.zi"},
      {"", nullptr, kNoVersionLine},
      {"# version \n", nullptr, kNoVersionLine},
      {"# version 2025b extra\n", nullptr, kNoVersionLine},
      {"# version 2025b\r\n", nullptr, kNoVersionLine},
      {"R d 1916 o -\n# version 2025b\n", nullptr, kNoVersionLine},
  };
  for (const Case& c : cases) {
    const std::string what = c.content ? c.content : "(no tzdata.zi)";
    ScratchZoneinfo scratch(c.content);
    auto version = ReadTzdataVersion(scratch.dir());
    if (c.release != nullptr) {
      ASSERT_TRUE(version.ok()) << what << ": " << version.status().ToString();
      EXPECT_EQ(*version, c.release) << what;
      continue;
    }
    ASSERT_FALSE(version.ok()) << what;
    EXPECT_EQ(version.status().IsNotFound(), c.content == nullptr) << what;
    EXPECT_EQ(version.status().IsCorruption(), c.content != nullptr) << what;
    const std::string message = (c.content == nullptr ? "no " : "") + scratch.dir() + c.error;
    EXPECT_EQ(version.status().message(), message) << what;
  }
}

TEST(TimeZoneTest, UtcAndEmptyAreUtc) {
  auto db = Db();
  for (const char* name : {"", "UTC"}) {
    auto z = db->Load(name);
    ASSERT_TRUE(z.ok()) << name;
    EXPECT_EQ((*z)->name(), "UTC");
    EXPECT_EQ((*z)->OffsetAt(0), 0);
  }
}

TEST(TimeZoneTest, LoadErrorsAreGos) {
  auto db = Db();
  EXPECT_EQ(db->Load("Mars/Olympus").status().message(), "unknown time zone Mars/Olympus");
  EXPECT_EQ(db->Load("../etc/passwd").status().message(), "time: invalid location name");
  EXPECT_EQ(db->Load("/etc/localtime").status().message(), "time: invalid location name");
  EXPECT_EQ(db->Load("\\x").status().message(), "time: invalid location name");
  EXPECT_EQ(db->Load("America").status().message(), "is a directory");
  EXPECT_EQ(db->Load("tzdata.zi").status().message(), "malformed time zone information");
  EXPECT_EQ(db->Load("UTC/x").status().message(), "not a directory");
  EXPECT_EQ(db->Load("america/new_york").status().message(), "unknown time zone america/new_york");
}

TEST(TimeZoneTest, LocalIsConfigured) {
  auto db = OpenSystemTimeZoneDb(tzdata_test::TestTzdataOptions("Europe/Rome"));
  ASSERT_TRUE(db.ok());
  auto local = (*db)->Load("Local");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ((*local)->name(), "Local");
  EXPECT_EQ((*local)->OffsetAt(At("2016-05-19T10:00:00Z")), 7200);
  EXPECT_FALSE(OpenSystemTimeZoneDb(tzdata_test::TestTzdataOptions("Nowhere/Land")).ok());
}

TEST(TimeZoneTest, CacheReturnsSameZone) {
  auto db = Db();
  auto a = db->Load("Europe/Rome");
  auto b = db->Load("Europe/Rome");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
}

struct LookupCase {
  const char* zone;
  const char* instant;
  int offset;
  bool is_dst;
};

TEST(TimeZoneTest, LookupOffsets) {
  auto db = Db();
  const LookupCase cases[] = {
      {"America/New_York", "2021-03-14T06:59:59Z", -5 * 3600, false},
      {"America/New_York", "2021-03-14T07:00:00Z", -4 * 3600, true},
      {"America/New_York", "2021-11-07T05:59:59Z", -4 * 3600, true},
      {"America/New_York", "2021-11-07T06:00:00Z", -5 * 3600, false},
      {"Europe/London", "2021-03-28T01:00:00Z", 3600, true},
      {"Australia/Lord_Howe", "2021-10-02T15:30:00Z", 11 * 3600, true},
      {"Australia/Lord_Howe", "2021-10-02T15:29:59Z", 10 * 3600 + 1800, false},
      {"Asia/Kathmandu", "2021-01-01T00:00:00Z", 5 * 3600 + 45 * 60, false},
      {"Pacific/Chatham", "2021-09-25T14:00:00Z", 13 * 3600 + 45 * 60, true},
      // Past the last transition in the file (2037): Go's POSIX footer rules.
      {"America/New_York", "2050-07-01T00:00:00Z", -4 * 3600, true},
      {"America/New_York", "2050-12-01T00:00:00Z", -5 * 3600, false},
      {"Australia/Sydney", "2050-01-15T00:00:00Z", 11 * 3600, true},
      {"Australia/Sydney", "2050-07-15T00:00:00Z", 10 * 3600, false},
      // Before the first transition: Go's lookupFirstZone (local mean time for New York).
      {"America/New_York", "1800-01-01T00:00:00Z", -(4 * 3600 + 56 * 60 + 2), false},
      {"Etc/GMT+5", "2021-01-01T00:00:00Z", -5 * 3600, false},
  };
  for (const auto& c : cases) {
    auto z = db->Load(c.zone);
    ASSERT_TRUE(z.ok()) << c.zone;
    const auto p = (*z)->Lookup(At(c.instant));
    EXPECT_EQ(p.offset, c.offset) << c.zone << " " << c.instant;
    EXPECT_EQ(p.is_dst, c.is_dst) << c.zone << " " << c.instant;
    EXPECT_LE(p.start, At(c.instant));
  }
}

TEST(TimeZoneTest, FooterPeriodsAreGos) {
  // Go's tzset reports DST as [start, end) of that year's rule instants; standard time after the
  // fall transition runs to start of year + 365 days, even in leap years.
  auto z = *Db()->Load("America/New_York");
  const auto dst = z->Lookup(At("2040-07-01T00:00:00Z"));
  EXPECT_EQ(dst.start, At("2040-03-11T07:00:00Z"));
  EXPECT_EQ(dst.end, At("2040-11-04T06:00:00Z"));
  const auto late = z->Lookup(At("2040-12-01T00:00:00Z"));
  EXPECT_EQ(late.end, At("2040-12-31T00:00:00Z"));
}

// Expected values come from Go 1.19's time.Date on the same tzdata.
struct WallCase {
  const char* zone;
  int64_t y;
  int mo, d, h, mi;
  const char* want;
};

TEST(TimeZoneTest, UnixFromWallMatchesGoDate) {
  auto db = Db();
  const WallCase cases[] = {
      // Spring-forward gap: the reading taken as UTC is still in EST, the implied instant is not,
      // so Go re-looks-up and applies EDT: 02:30 - (-4h) = 06:30Z, which is 01:30 EST.
      {"America/New_York", 2021, 3, 14, 2, 30, "2021-03-14T06:30:00Z"},
      // Fall-back fold: Go's first lookup lands in EDT and keeps it (the earlier instant).
      {"America/New_York", 2021, 11, 7, 1, 30, "2021-11-07T05:30:00Z"},
      // London fold: the first lookup gives GMT (offset 0), so Go takes the later instant.
      {"Europe/London", 2021, 10, 31, 1, 30, "2021-10-31T01:30:00Z"},
      {"Europe/London", 2021, 3, 28, 1, 30, "2021-03-28T01:30:00Z"},
      // Lord Howe's 30-minute gap and fold.
      {"Australia/Lord_Howe", 2021, 10, 3, 2, 15, "2021-10-02T15:45:00Z"},
      {"Australia/Lord_Howe", 2021, 4, 4, 1, 45, "2021-04-03T15:15:00Z"},
      // Sao Paulo 2018: midnight did not exist on Nov 4; Go lands on 23:00 of Nov 3.
      {"America/Sao_Paulo", 2018, 11, 4, 0, 0, "2018-11-04T02:00:00Z"},
  };
  for (const auto& c : cases) {
    auto z = db->Load(c.zone);
    ASSERT_TRUE(z.ok());
    const int64_t got = (*z)->UnixFromWall(WallSecondsFromCivil(c.y, c.mo, c.d, c.h, c.mi, 0));
    EXPECT_EQ(FormatRfc3339(Time::FromUnix(got)), c.want) << c.zone;
  }
}

TEST(TimeZoneTest, MalformedTzif) {
  EXPECT_EQ(TimeZone::FromTzif("x", "").status().message(), "malformed time zone information");
  EXPECT_EQ(TimeZone::FromTzif("x", "TZif4").status().message(), "malformed time zone information");
  std::string header("TZif2", 5);
  header.resize(44, '\0');  // all counts zero: no zones
  EXPECT_FALSE(TimeZone::FromTzif("x", header).ok());
}

}  // namespace
}  // namespace cronledger::model
