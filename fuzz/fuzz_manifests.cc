// Fuzz target: the manifest loader (app/manifests.h) on arbitrary bytes as a YAML file and as a
// JSON file. Beyond no crash (deep YAML and JSON included): a load either fails with a message or
// yields CronJobs that have a name and a namespace.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "app/manifests.h"
#include "fuzz/fuzz_check.h"

namespace {

// A private directory for the two files, made once per process.
const std::string& Dir() {
  static const std::string dir = [] {
    std::string tmpl = "/tmp/fuzz-manifests-XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    return tmpl;
  }();
  return dir;
}

void Load(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = Dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  auto loaded = cronledger::app::LoadManifests({path});
  if (!loaded.ok()) {
    FUZZ_CHECK(!loaded.status().message().empty(), "error without a message");
    return;
  }
  for (const auto& m : loaded->cron_jobs) {
    FUZZ_CHECK(!m.cron_job.metadata.name.empty(), "CronJob without a name from %s",
               m.source.c_str());
    FUZZ_CHECK(!m.cron_job.metadata.namespace_.empty(), "CronJob without a namespace");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Load("m.yaml", data, size);
  Load("m.json", data, size);
  return 0;
}
