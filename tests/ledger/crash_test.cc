// Kills `cronledger ingest --sync always` with SIGKILL at random points while it ingests a large
// generated stream, restarts it, and after every kill proves: every acknowledged unit is in the
// log, every input is there exactly once, no partial unit is visible (the log holds exactly the
// documents before the committed source position), the view equals a rebuild from the log, and
// re-ingesting from the recorded position duplicates nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "ingest/stream_ingest.h"
#include "model/test_events.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger {
namespace {

constexpr uint64_t kLines = 4000;
constexpr uint64_t kCronJobs = 50;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// What each line of the generated file is: a watch event with a unique resourceVersion, or a
// garbage line that must be quarantined.
struct Stream {
  std::map<uint64_t, std::string> rv_by_line;       // file line -> resourceVersion
  std::map<uint64_t, std::string> garbage_by_line;  // file line -> text
  uint64_t lines = 0;
};

Stream WriteStream(const std::string& path) {
  Stream s;
  std::ofstream f(path);
  uint64_t line = 0;
  for (uint64_t i = 0; i < kLines; ++i) {
    if (i % 97 == 13) {
      const std::string garbage = "garbage line " + std::to_string(i);
      f << garbage << "\n";
      s.garbage_by_line[++line] = garbage;
    }
    f << model::testing::StreamLine(i, kCronJobs);
    s.rv_by_line[++line] = std::to_string(i + 1);
  }
  s.lines = line;
  return s;
}

struct IngestRun {
  bool exited = false;  // finished on its own (not killed)
  int exit_code = -1;
  uint64_t max_acked_line = 0;
  uint64_t acks = 0;
};

// Starts the ingest, waits for its first ack (or, with early_kill, not at all), lets it run for
// `delay`, then SIGKILLs it unless it finished.
IngestRun IngestAndKill(const std::string& file, const std::string& data,
                        std::chrono::microseconds delay, bool early_kill, bool kill) {
  int out[2];
  if (::pipe(out) != 0) std::abort();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    ::close(out[0]);
    ::execl(CRONLEDGER_BIN, "cronledger", "ingest", "--from", file.c_str(), "--data-dir",
            data.c_str(), "--sync", "always", "--batch", "32", "--ack", "-o", "json",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  IngestRun run;
  std::string buffer;
  auto drain = [&](int timeout_ms) {  // false at EOF
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return true;
    char chunk[4096];
    const ssize_t n = ::read(out[0], chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      const std::string l = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      unsigned long long offset = 0, line = 0;
      if (std::sscanf(l.c_str(), "committed offset=%llu line=%llu", &offset, &line) == 2) {
        run.max_acked_line = std::max<uint64_t>(run.max_acked_line, line);
        ++run.acks;
      }
    }
    return true;
  };
  using Clock = std::chrono::steady_clock;
  bool open = true;
  if (!early_kill) {
    const auto limit = Clock::now() + std::chrono::seconds(30);
    while (open && run.acks == 0 && Clock::now() < limit) open = drain(50);
  }
  const auto deadline = Clock::now() + delay;
  while (open && (!kill || Clock::now() < deadline)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    open = drain(kill ? static_cast<int>(std::max<int64_t>(left.count(), 0)) : 100);
  }
  if (open && kill) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  while (drain(0)) {
  }
  ::close(out[0]);
  run.exited = WIFEXITED(status);
  run.exit_code = run.exited ? WEXITSTATUS(status) : -1;
  return run;
}

// Checks the ledger against the stream; returns the committed next line.
uint64_t Verify(const std::string& data, const std::string& file, const Stream& stream,
                const IngestRun& run) {
  store::LedgerOptions o;
  o.path = data;
  o.sync = store::SyncMode::kNone;
  auto opened = store::Ledger::Open(o);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) return 0;
  auto& ledger = *opened;
  uint64_t next_line = 1;
  auto pos = ledger->GetSourcePosition("file:" + file);
  if (pos.ok()) {
    auto decoded = ingest::DecodeStreamPosition(*pos);
    EXPECT_TRUE(decoded.ok());
    next_line = decoded->line;
  } else {
    EXPECT_TRUE(pos.status().IsNotFound());
  }
  // Acknowledged units are durable.
  EXPECT_GE(next_line, run.max_acked_line);

  // The log holds exactly the events before the committed position, each once, in order.
  std::vector<std::string> rvs;
  uint64_t expect_seq = 1;
  EXPECT_TRUE(ledger
                  ->ScanInputs(0, true,
                               [&](const store::LogRecord& r) {
                                 EXPECT_EQ(r.seq, expect_seq++);
                                 const auto& ev = std::get<model::WatchEvent>(r.input);
                                 EXPECT_FALSE(ev.raw.empty());
                                 rvs.push_back(ev.resource_version);
                                 return true;
                               })
                  .ok());
  std::vector<std::string> want;
  for (const auto& [line, rv] : stream.rv_by_line) {
    if (line < next_line) want.push_back(rv);
  }
  EXPECT_EQ(rvs, want);
  EXPECT_EQ(ledger->Meta()->last_input_seq, rvs.size());

  // Quarantine: exactly the garbage lines before the position, each once.
  std::vector<std::string> quarantined, want_garbage;
  auto listed = ledger->ListQuarantine(0, 0);
  EXPECT_TRUE(listed.ok());
  for (const auto& q : *listed) quarantined.push_back(q.raw);
  for (const auto& [line, text] : stream.garbage_by_line) {
    if (line < next_line) want_garbage.push_back(text);
  }
  EXPECT_EQ(quarantined, want_garbage);

  auto rebuild = ledger->Rebuild(false);
  EXPECT_TRUE(rebuild.ok());
  EXPECT_TRUE(rebuild->differences.empty()) << rebuild->differences[0].key;
  return next_line;
}

TEST(LedgerCrashTest, SigkillAtRandomPointsLosesAndDuplicatesNothing) {
  const uint64_t points = EnvOr("CRONLEDGER_CRASH_POINTS", 200);
  const uint64_t seed = EnvOr("CRONLEDGER_CRASH_SEED", 20240519);
  std::printf("crash test: %llu kill points, seed %llu\n", static_cast<unsigned long long>(points),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  store::testing::TempDir dir;
  const std::string file = dir.Sub("stream.jsonl");
  const Stream stream = WriteStream(file);
  uint64_t kills = 0, completions = 0, rounds = 0;
  const auto start = std::chrono::steady_clock::now();
  while (kills < points && !::testing::Test::HasFailure()) {
    const std::string data = dir.Sub("data-" + std::to_string(rounds++));
    while (kills < points && !::testing::Test::HasFailure()) {
      // One kill in eight lands anywhere from process start (open, WAL recovery); the others
      // after the first acknowledged unit.
      const bool early = rng() % 8 == 0;
      const auto delay = std::chrono::microseconds(rng() % (early ? 150000 : 40000));
      const IngestRun run = IngestAndKill(file, data, delay, early, /*kill=*/true);
      if (run.exited) {
        ASSERT_EQ(run.exit_code, 0);
      } else {
        ++kills;
      }
      const uint64_t next_line = Verify(data, file, stream, run);
      if (run.exited) {
        EXPECT_EQ(next_line, stream.lines + 1);
        ++completions;
        // Re-ingesting the finished stream adds nothing.
        const IngestRun again = IngestAndKill(file, data, {}, true, /*kill=*/false);
        EXPECT_EQ(again.exit_code, 0);
        EXPECT_EQ(again.acks, 0u);
        Verify(data, file, stream, again);
        break;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("crash test: %llu kills, %llu completed ingests, %llu ledgers, %.1f s\n",
              static_cast<unsigned long long>(kills), static_cast<unsigned long long>(completions),
              static_cast<unsigned long long>(rounds), seconds);
  EXPECT_GE(kills, points);
}

}  // namespace
}  // namespace cronledger
