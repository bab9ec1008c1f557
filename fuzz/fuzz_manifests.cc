// Fuzz target: the manifest loader (app/manifests.h) on arbitrary bytes as a YAML file and as a
// JSON file, through LoadManifestText, which LoadManifests runs on each file's contents (no disk
// I/O per input). Beyond no crash (deep YAML and JSON included): a load either fails with a
// message or yields CronJobs that have a name and a namespace.

#include <cstddef>
#include <cstdint>
#include <string>

#include "app/manifests.h"
#include "fuzz/fuzz_check.h"

namespace {

void Load(const std::string& name, const std::string& text) {
  cronledger::app::ManifestLoadResult loaded;
  const cronledger::Status s = cronledger::app::LoadManifestText(name, text, &loaded);
  if (!s.ok()) {
    FUZZ_CHECK(!s.message().empty(), "error without a message");
    return;
  }
  for (const auto& m : loaded.cron_jobs) {
    FUZZ_CHECK(!m.cron_job.metadata.name.empty(), "CronJob without a name from %s",
               m.source.c_str());
    FUZZ_CHECK(!m.cron_job.metadata.namespace_.empty(), "CronJob without a namespace");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Load("m.yaml", text);
  Load("m.json", text);
  return 0;
}
