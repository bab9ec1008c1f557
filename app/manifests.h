#pragma once

// Loads CronJob manifests the way `kubectl apply -f` accepts them: YAML or JSON, single or
// multi-document files, `kind: List` documents, or a directory of such files (*.yaml, *.yml,
// *.json, read in name order). Documents of other kinds are reported, not silently skipped.

#include <string>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace cronledger::app {

struct LoadedManifest {
  model::CronJob cron_job;
  std::string source;  // "path:document-index" for messages
};

struct ManifestLoadResult {
  std::vector<LoadedManifest> cron_jobs;
  std::vector<std::string> skipped;  // "path:doc: kind Foo is not a CronJob"
};

// Fails on unreadable paths, YAML/JSON syntax errors and CronJobs that do not decode (the error
// names the file and document). Non-CronJob documents go to `skipped`.
Result<ManifestLoadResult> LoadManifests(const std::vector<std::string>& paths);
// The same for one file's contents already read: `name` decides JSON (".json") or YAML and names
// the file in messages. Appends to `*out`.
Status LoadManifestText(const std::string& name, const std::string& text, ManifestLoadResult* out);

// Where `plan` and `simulate` start by default: the newest creationTimestamp among the CronJobs,
// so manifests exported from a cluster give the same answer on every run; `now` when none has
// one (hand-written manifests), never the Unix epoch.
Time DefaultStart(const ManifestLoadResult& manifests, Time now);

// Converts one YAML document's text to JSON with Kubernetes' scalar typing (plain true/false are
// booleans, plain integers are numbers, quoted scalars stay strings). Exposed for tests.
Result<std::vector<model::Json>> YamlDocumentsToJson(const std::string& text);

}  // namespace cronledger::app
