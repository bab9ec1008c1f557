// `cronledger decide --input FILE|- --output json`: one reconcile pass of one CronJob, in memory,
// against an emulated API (docs/design.md §4). Bad input exits 2 with {"error": ...} on stdout.
#include <cstdio>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "model/decision.h"
#include "model/json.h"
#include "model/json_limits.h"
#include "model/objects.h"
#include "model/timezone.h"
#include "reconciler/api_emulator.h"
#include "reconciler/decide.h"
#include "reconciler/decide_codec.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger decide --input FILE|- [--output json]\n"
    "One reconcile pass of one CronJob in memory: reads {\"now\", \"cronJob\", \"jobs\", \"api\",\n"
    "\"options\"} and prints the actions, events, status and decisions as JSON.\n";

using model::Json;

constexpr const char* kErrorKeys[] = {"getJob", "deleteJob", "createJob", "getCronJob",
                                      "updateStatus"};

Result<std::string> ReadAll(const std::string& path, std::FILE* in) {
  std::FILE* f = path == "-" ? in : std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::InvalidArgument("cannot open input file \"" + path + "\"");
  std::string data;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  if (f != in) std::fclose(f);
  if (failed) return Status::InvalidArgument("cannot read input \"" + path + "\"");
  return data;
}

Result<Json> RequireObject(const Json& parent, const char* key, const std::string& path) {
  if (!parent.contains(key) || parent[key].is_null()) {
    return Status::InvalidArgument(path + key + ": required");
  }
  if (!parent[key].is_object()) {
    return Status::InvalidArgument(path + key + ": expected object, got " +
                                   parent[key].type_name());
  }
  return parent[key];
}

// Each object of the input within the API server's limits (model/json_limits.h): ParseJson
// bounded the whole document, this bounds every object in it as the API would have.
Status CheckObject(const Json& j, const std::string& what) {
  return model::CheckObjectLimits(model::DumpJson(j)).WithContext(what);
}

Result<model::CronJob> DecodeCronJobInput(const Json& j, const std::string& what) {
  CL_RETURN_IF_ERROR(CheckObject(j, what));
  auto cj = model::DecodeCronJob(j);
  if (!cj.ok()) return cj.status().WithContext(what);
  if (cj->metadata.name.empty()) return Status::InvalidArgument(what + ".metadata.name: required");
  const Json& spec = j.contains("spec") ? j["spec"] : Json();
  if (!spec.is_object() || !spec.contains("schedule") || !spec["schedule"].is_string()) {
    return Status::InvalidArgument(what + ".spec.schedule: required string");
  }
  // Objects without a namespace live in "default", as kubectl would create them.
  if (cj->metadata.namespace_.empty()) cj->metadata.namespace_ = "default";
  return cj;
}

Status DecodeApi(const Json& input, reconciler::EmulatedApiOptions* api) {
  if (!input.contains("api") || input["api"].is_null()) return Status::Ok();
  CL_ASSIGN_OR_RETURN(Json j, RequireObject(input, "api", ""));
  if (j.contains("cronJob")) {
    if (!j["cronJob"].is_null())
      CL_RETURN_IF_ERROR(DecodeCronJobInput(j["cronJob"], "api.cronJob").status());
    api->cron_job = j["cronJob"];
  }
  CL_ASSIGN_OR_RETURN(Json jobs, model::OptObject(j, "jobs", "api"));
  for (auto it = jobs.begin(); it != jobs.end(); ++it) {
    if (!it->is_null()) {
      const std::string what = "api.jobs[\"" + it.key() + "\"]";
      CL_RETURN_IF_ERROR(CheckObject(*it, what));
      CL_RETURN_IF_ERROR(model::DecodeJob(*it).status().WithContext(what));
    }
    api->jobs[it.key()] = *it;
  }
  CL_ASSIGN_OR_RETURN(Json errors, model::OptObject(j, "errors", "api"));
  for (auto it = errors.begin(); it != errors.end(); ++it) {
    bool known = false;
    for (const char* k : kErrorKeys) known = known || it.key() == k;
    if (!known) return Status::InvalidArgument("api.errors." + it.key() + ": unknown call");
    if (it->is_null()) continue;
    if (!it->is_string())
      return Status::InvalidArgument("api.errors." + it.key() + ": expected string or null");
    api->errors[it.key()] = it->get<std::string>();
  }
  return Status::Ok();
}

struct DecideRequest {
  reconciler::SyncInput input;
  reconciler::EmulatedApiOptions api;
  Json cached_cron_job;
};

Result<DecideRequest> ParseRequest(const std::string& text) {
  CL_ASSIGN_OR_RETURN(Json j, model::ParseJson(text));
  if (!j.is_object())
    return Status::InvalidArgument(std::string("input: expected object, got ") + j.type_name());
  DecideRequest r;
  CL_ASSIGN_OR_RETURN(auto now, model::OptTime(j, "now", "input"));
  if (!now) return Status::InvalidArgument("input.now: required (RFC 3339)");
  r.input.now = *now;
  CL_ASSIGN_OR_RETURN(r.cached_cron_job, RequireObject(j, "cronJob", "input."));
  CL_ASSIGN_OR_RETURN(r.input.cron_job, DecodeCronJobInput(r.cached_cron_job, "cronJob"));
  r.cached_cron_job["metadata"]["namespace"] = r.input.cron_job.metadata.namespace_;
  if (j.contains("jobs") && !j["jobs"].is_null()) {
    if (!j["jobs"].is_array())
      return Status::InvalidArgument(std::string("input.jobs: expected array, got ") +
                                     j["jobs"].type_name());
    for (size_t i = 0; i < j["jobs"].size(); ++i) {
      CL_RETURN_IF_ERROR(CheckObject(j["jobs"][i], "jobs[" + std::to_string(i) + "]"));
      auto job = model::DecodeJob(j["jobs"][i]);
      if (!job.ok()) return job.status().WithContext("jobs[" + std::to_string(i) + "]");
      r.input.jobs.push_back(std::move(*job));
    }
  }
  CL_RETURN_IF_ERROR(DecodeApi(j, &r.api));
  CL_ASSIGN_OR_RETURN(Json options, model::OptObject(j, "options", "input"));
  CL_ASSIGN_OR_RETURN(auto cleanup, model::OptBool(options, "historyCleanup", "input.options"));
  r.input.options.history_cleanup = cleanup.value_or(true);
  if (j.contains("accounting") && !j["accounting"].is_null()) {
    CL_ASSIGN_OR_RETURN(r.input.accounting, model::DecodeAccountingState(j["accounting"]));
  }
  return r;
}

int PrintError(const CommandIo& io, const std::string& message, int code) {
  std::fprintf(io.out, "%s\n", model::DumpJson(Json{{"error", message}}).c_str());
  return code;
}

int RunDecide(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("input", "i").Value("output", "o");
  if (Status s = flags.Parse(args); !s.ok()) return PrintError(io, s.message(), kExitUsage);
  if (flags.GetOr("output", "json") != "json")
    return PrintError(io, "--output: only json is supported", kExitUsage);
  if (!flags.Has("input"))
    return PrintError(io, "--input: required (a file, or - for stdin)", kExitUsage);
  auto text = ReadAll(*flags.Get("input"), io.in);
  if (!text.ok()) return PrintError(io, text.status().message(), kExitUsage);
  auto request = ParseRequest(*text);
  if (!request.ok()) return PrintError(io, request.status().message(), kExitUsage);
  auto tzdb = model::OpenSystemTimeZoneDb({});
  if (!tzdb.ok()) return PrintError(io, tzdb.status().message(), kExitFailure);
  request->input.tzdb = tzdb->get();
  reconciler::EmulatedApi api(std::move(request->api), request->cached_cron_job);
  const reconciler::SyncResult result = reconciler::RunPass(
      std::move(request->input), [&api](const model::ApiCall& call) { return api.Perform(call); });
  std::fprintf(io.out, "%s\n", model::DumpJson(reconciler::EncodeSyncResult(result)).c_str());
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("decide", "run one reconcile pass of one CronJob in memory (JSON in/out)",
                    RunDecide, kUsage);

}  // namespace cronledger::app
