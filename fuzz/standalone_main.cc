// A driver for the libFuzzer targets without libFuzzer: the CI smoke run of the sanitizer build
// (g++ has no -fsanitize=fuzzer). It runs LLVMFuzzerTestOneInput on
//   - every input file named on the command line (a directory: its files, in name order), whole;
//   - then `--mutations N` inputs derived from them by a fixed-seed mutator (bit flips, byte
//     overwrites, inserts, erases, duplicated runs, splices of two inputs, truncation), each at
//     most `--max-len` bytes (default 4096, as fuzz/run.sh).
// It is not coverage-guided: it replays what libFuzzer found (corpus, regressions) and shakes it a
// little, under ASan and UBSan, on every CI run. A failure aborts as under libFuzzer; the input
// that failed is written first to `--crash-file` (default ./fuzz-smoke-crash), so it can be run
// again with the libFuzzer build: build-fuzz/fuzz/<target> FILE.
//
// Usage: <target>_smoke [--mutations N] [--seed S] [--max-len N] [--crash-file F] PATH...

#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run and where to write it when the process dies on it.
const std::string* g_current = nullptr;
char g_crash_file[4096] = "fuzz-smoke-crash";

// Async-signal-safe: open, write, close only.
void SaveCurrent() {
  if (g_current == nullptr) return;
  const int fd = ::open(g_crash_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  const char* p = g_current->data();
  size_t left = g_current->size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::close(fd);
  static const char kSaved[] = "fuzz smoke: the failing input is in the crash file\n";
  [[maybe_unused]] const ssize_t w = ::write(2, kSaved, sizeof(kSaved) - 1);
}

extern "C" void OnFatalSignal(int sig) {
  SaveCurrent();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// ASan and UBSan report, then call this before they end the process.
extern "C" void OnSanitizerDeath() { SaveCurrent(); }

}  // namespace

namespace {

void Run(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

bool ReadFile(const fs::path& p, std::string* out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

std::string Mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng, size_t max_len) {
  auto pick = [&rng](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  std::string s = seeds[pick(seeds.size())];
  if (s.size() > max_len) s.resize(max_len);
  const int steps = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < steps; ++i) {
    switch (pick(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // overwrite a byte, often with a JSON or YAML structural character
        if (!s.empty()) {
          static const char kSpecial[] = "{}[]\":,\\-#*/? \n\t0";
          s[pick(s.size())] =
              pick(2) == 0 ? kSpecial[pick(sizeof(kSpecial) - 1)] : static_cast<char>(pick(256));
        }
        break;
      case 2:  // insert a byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(pick(s.size() + 1)),
                 static_cast<char>(pick(256)));
        break;
      case 3:  // erase a run
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
        }
        break;
      case 4:  // duplicate a run (deepens nesting, repeats fields)
        if (!s.empty()) {
          const size_t at = pick(s.size());
          const size_t len = 1 + pick(std::min<size_t>(64, s.size() - at));
          s.insert(at, s.substr(at, len));
        }
        break;
      case 5: {  // splice: this input's head with another's tail
        const std::string& other = seeds[pick(seeds.size())];
        s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
        break;
      }
      default:  // truncate
        s.resize(pick(s.size() + 1));
        break;
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--mutations N] [--seed S] [--max-len N] [--crash-file F] PATH...\n",
               argv0);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mutations = 0;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<fs::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--mutations" && has_value) {
      mutations = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-len" && has_value) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--crash-file" && has_value) {
      std::snprintf(g_crash_file, sizeof(g_crash_file), "%s", argv[++i]);
    } else if (arg.starts_with("--")) {
      Usage(argv[0]);
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty() || max_len == 0) Usage(argv[0]);
  __sanitizer_set_death_callback(&OnSanitizerDeath);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, &OnFatalSignal);

  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file()) in_dir.push_back(e.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "fuzz smoke: no such file or directory: %s\n", p.c_str());
      return 2;
    }
  }
  std::vector<std::string> seeds;
  for (const fs::path& f : files) {
    std::string data;
    if (!ReadFile(f, &data)) {
      std::fprintf(stderr, "fuzz smoke: cannot read %s\n", f.c_str());
      return 2;
    }
    Run(data);
    seeds.push_back(std::move(data));
  }
  if (seeds.empty()) seeds.emplace_back();
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < mutations; ++i) Run(Mutate(seeds, rng, max_len));
  std::printf("fuzz smoke: %zu inputs and %llu mutations, seed %llu: no failure\n", files.size(),
              static_cast<unsigned long long>(mutations), static_cast<unsigned long long>(seed));
  return 0;
}
