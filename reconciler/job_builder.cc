#include "reconciler/job_builder.h"

#include "reconciler/cron_go_text.h"

namespace cronledger::reconciler {

std::string JobName(const std::string& cron_job_name, Time scheduled) {
  // C++ integer division truncates toward zero, like Go's (Go's zero time -> "-1035593280").
  return cron_job_name + "-" + std::to_string(scheduled.unix_seconds() / 60);
}

Result<model::Json> BuildJob(const model::CronJob& cj, Time scheduled,
                             const model::TimeZoneDb& tzdb) {
  // The annotation uses spec.timeZone even when the schedule carries its own TZ= (docs/semantics.md
  // §12), and UTC (not the controller's Local) when the field is absent.
  int offset = 0;
  if (cj.spec.time_zone) {
    auto zone = tzdb.Load(*cj.spec.time_zone);
    if (!zone.ok()) return zone.status();
    offset = (*zone)->OffsetAt(scheduled.unix_seconds());
  }
  // The tree is built member by member in place (no initializer-list temporaries, which nlohmann
  // copies): replay builds one for every createJob decision it re-derives.
  using Object = model::Json::object_t;
  model::Json meta(model::Json::value_t::object);
  Object& m = meta.get_ref<Object&>();
  m.emplace("name", JobName(cj.metadata.name, scheduled));
  m.emplace("namespace", cj.metadata.namespace_);
  if (!cj.spec.job_template.labels.empty()) {
    Object& labels =
        m.emplace("labels", model::Json::value_t::object).first->second.get_ref<Object&>();
    for (const auto& [k, v] : cj.spec.job_template.labels) labels.emplace_hint(labels.end(), k, v);
  }
  Object& annotations =
      m.emplace("annotations", model::Json::value_t::object).first->second.get_ref<Object&>();
  for (const auto& [k, v] : cj.spec.job_template.annotations) {
    annotations.emplace_hint(annotations.end(), k, v);
  }
  annotations.insert_or_assign(kScheduledTimestampAnnotation, FormatRfc3339(scheduled, offset));
  // The owner reference names the CronJob's own group/version (batch/v1 for built-in CronJobs,
  // cronledger.io/v1 for the project's CRD).
  model::Json owner(model::Json::value_t::object);
  Object& o = owner.get_ref<Object&>();
  o.emplace("apiVersion", cj.api_version.empty() ? "batch/v1" : cj.api_version);
  o.emplace("kind", "CronJob");
  o.emplace("name", cj.metadata.name);
  o.emplace("uid", cj.metadata.uid);
  o.emplace("controller", true);
  o.emplace("blockOwnerDeletion", true);
  model::Json owners(model::Json::value_t::array);
  owners.get_ref<model::Json::array_t&>().push_back(std::move(owner));
  m.emplace("ownerReferences", std::move(owners));
  m.emplace("creationTimestamp", FormatRfc3339(scheduled));
  model::Json job(model::Json::value_t::object);
  Object& top = job.get_ref<Object&>();
  top.emplace("apiVersion", "batch/v1");
  top.emplace("kind", "Job");
  top.emplace("metadata", std::move(meta));
  top.emplace("spec", cj.spec.job_template.spec.Tree());
  return job;
}

std::vector<const model::Job*> OwnedJobs(const model::CronJob& cj,
                                         const std::vector<model::Job>& jobs) {
  std::vector<const model::Job*> owned;
  for (const auto& job : jobs) {
    if (job.metadata.namespace_ != cj.metadata.namespace_) continue;
    const model::OwnerReference* ref = job.metadata.ControllerRef();
    if (ref != nullptr && ref->name == cj.metadata.name) owned.push_back(&job);
  }
  return owned;
}

std::vector<const model::Job*> OwnedJobs(const model::CronJob& cj,
                                         std::span<const model::Job* const> jobs) {
  std::vector<const model::Job*> owned;
  for (const model::Job* job : jobs) {
    if (job->metadata.namespace_ != cj.metadata.namespace_) continue;
    const model::OwnerReference* ref = job->metadata.ControllerRef();
    if (ref != nullptr && ref->name == cj.metadata.name) owned.push_back(job);
  }
  return owned;
}

bool JobStartedBefore(const model::Job& a, const model::Job& b) {
  const auto& sa = a.status.start_time;
  const auto& sb = b.status.start_time;
  if (!sa && sb) return false;
  if (sa && !sb) return true;
  if (sa == sb) return a.metadata.name < b.metadata.name;
  return *sa < *sb;
}

std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          gotext::AppendHexEscape(&out, 'x', static_cast<uint32_t>(c), 2);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace cronledger::reconciler
