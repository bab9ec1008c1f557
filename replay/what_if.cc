#include "replay/what_if.h"

#include <charconv>

#include "model/json.h"

namespace cronledger::replay {
namespace {

Status Bad(std::string_view key, std::string_view why) {
  return Status::InvalidArgument("--set " + std::string(key) + ": " + std::string(why));
}

Result<std::optional<int64_t>> ParseSeconds(std::string_view key, std::string_view v) {
  if (v.empty() || v == "null") return std::optional<int64_t>();
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 0) {
    return Bad(key, "want a non-negative integer, got \"" + std::string(v) + "\"");
  }
  return std::optional<int64_t>(n);
}

Result<bool> ParseBool(std::string_view key, std::string_view v) {
  if (v == "true") return true;
  if (v == "false") return false;
  return Bad(key, "want true or false, got \"" + std::string(v) + "\"");
}

}  // namespace

Status ApplySetting(std::string_view setting, WhatIf* w) {
  const size_t eq = setting.find('=');
  if (eq == std::string_view::npos) return Bad(setting, "want KEY=VALUE");
  const std::string_view key = setting.substr(0, eq);
  const std::string_view v = setting.substr(eq + 1);
  if (key == "spec.schedule") {
    if (v.empty()) return Bad(key, "the schedule cannot be empty");
    w->schedule = std::string(v);
  } else if (key == "spec.timeZone") {
    w->time_zone = v.empty() || v == "null" ? std::optional<std::string>()
                                            : std::optional<std::string>(std::string(v));
  } else if (key == "spec.startingDeadlineSeconds") {
    CL_ASSIGN_OR_RETURN(w->starting_deadline_seconds, ParseSeconds(key, v));
  } else if (key == "spec.concurrencyPolicy") {
    if (v != "Allow" && v != "Forbid" && v != "Replace") {
      return Bad(key, "want Allow, Forbid or Replace, got \"" + std::string(v) + "\"");
    }
    w->concurrency_policy = std::string(v);
  } else if (key == "spec.suspend") {
    CL_ASSIGN_OR_RETURN(w->suspend, ParseBool(key, v));
  } else if (key == "controller.noDowntime") {
    CL_ASSIGN_OR_RETURN(w->no_downtime, ParseBool(key, v));
  } else {
    return Bad(key,
               "unknown key (spec.schedule, spec.timeZone, spec.startingDeadlineSeconds, "
               "spec.concurrencyPolicy, spec.suspend, controller.noDowntime)");
  }
  return Status::Ok();
}

std::vector<std::string> WhatIf::Describe() const {
  std::vector<std::string> out;
  if (schedule) out.push_back("spec.schedule=" + *schedule);
  if (time_zone) out.push_back("spec.timeZone=" + time_zone->value_or("null"));
  if (starting_deadline_seconds) {
    out.push_back("spec.startingDeadlineSeconds=" +
                  (*starting_deadline_seconds ? std::to_string(**starting_deadline_seconds)
                                              : std::string("null")));
  }
  if (concurrency_policy) out.push_back("spec.concurrencyPolicy=" + *concurrency_policy);
  if (suspend) out.push_back(std::string("spec.suspend=") + (*suspend ? "true" : "false"));
  if (no_downtime) out.push_back("controller.noDowntime=true");
  return out;
}

model::CronJob ApplyWhatIf(const WhatIf& w, const model::CronJob& cj) {
  model::CronJob out = cj;
  model::Json& spec = out.raw["spec"];
  if (!spec.is_object()) spec = model::Json::object();
  if (w.schedule) {
    out.spec.schedule = *w.schedule;
    spec["schedule"] = *w.schedule;
  }
  if (w.time_zone) {
    out.spec.time_zone = *w.time_zone;
    model::PutOptString(&spec, "timeZone", *w.time_zone);
  }
  if (w.starting_deadline_seconds) {
    out.spec.starting_deadline_seconds = *w.starting_deadline_seconds;
    model::PutOptInt(&spec, "startingDeadlineSeconds", *w.starting_deadline_seconds);
  }
  if (w.concurrency_policy) {
    out.spec.concurrency_policy = *w.concurrency_policy;
    spec["concurrencyPolicy"] = *w.concurrency_policy;
  }
  if (w.suspend) {
    out.spec.suspend = *w.suspend;
    spec["suspend"] = *w.suspend;
  }
  out.spec.raw = spec;
  return out;
}

}  // namespace cronledger::replay
