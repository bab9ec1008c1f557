// Fuzz target: `cronledger decide` (app/cmd_decide.cc) on arbitrary bytes as its input, through the
// registered command with in-memory streams. Beyond no crash (deep input included): it exits 0 or
// 2 and prints exactly one JSON document, `{"error": ...}` when it exits 2.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/command.h"
#include "fuzz/fuzz_check.h"
#include "model/json.h"

namespace {

const cronledger::app::Command& Decide() {
  for (const auto& c : cronledger::app::Commands()) {
    if (c.name == "decide") return c;
  }
  FUZZ_CHECK(false, "no decide command registered");
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cronledger;
  std::string input(reinterpret_cast<const char*>(data), size);
  std::FILE* in = fmemopen(input.data(), input.size() + (input.empty() ? 1 : 0), "rb");
  char* out_buf = nullptr;
  size_t out_size = 0;
  std::FILE* out = open_memstream(&out_buf, &out_size);
  static std::FILE* const err = std::fopen("/dev/null", "w");  // opened once per process
  FUZZ_CHECK(in != nullptr && out != nullptr && err != nullptr, "cannot open streams");
  const int code = Decide().run({"--input", "-"}, app::CommandIo{in, out, err});
  std::fclose(in);
  std::fclose(out);
  const std::string printed(out_buf, out_size);
  std::free(out_buf);
  FUZZ_CHECK(code == app::kExitOk || code == app::kExitUsage, "exit code %d", code);
  Result<model::Json> j = model::ParseJson(printed);
  FUZZ_CHECK(j.ok() && j->is_object(), "output is not one JSON object: %s", printed.c_str());
  if (code == app::kExitUsage) FUZZ_CHECK(j->contains("error"), "exit 2 without an error");
  return 0;
}
