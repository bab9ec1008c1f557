#include "emit/ledger_record.h"

#include <type_traits>

namespace cronledger::emit {
namespace {

using model::Json;

std::string TimeText(Time t) { return FormatRfc3339Nano(t); }

// Reads typed fields of an untrusted object; the first failure sticks and names its field.
class Reader {
 public:
  explicit Reader(const Json& j) : j_(j) {}
  std::string Str(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return {};
    if (!v->is_string()) return Fail(key), std::string();
    return v->get<std::string>();
  }
  uint64_t U64(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned()) return Fail(key), 0;
    return v->get<uint64_t>();
  }
  bool Bool(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) return Fail(key), false;
    return v->get<bool>();
  }
  Time At(const char* key) {
    const std::string s = Str(key);
    auto t = ParseRfc3339(s);
    if (!t.ok()) return Fail(key), Time();
    return *t;
  }
  model::ObjectKind Kind(const char* key) {
    auto k = model::ParseObjectKind(Str(key));
    if (!k.ok()) return Fail(key), model::ObjectKind::kJob;
    return *k;
  }
  Status status() const { return status_; }

 private:
  const Json* Find(const char* key) {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  void Fail(const char* key) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::string("ledger record: bad ") + key);
  }
  const Json& j_;
  Status status_;
};

Json Encode(const model::WatchEvent& e) {
  return {{"type", "watchEvent"},
          {"eventType", model::WatchEventTypeName(e.type)},
          {"kind", model::ObjectKindName(e.kind)},
          {"apiVersion", e.api_version},
          {"namespace", e.namespace_},
          {"name", e.name},
          {"uid", e.uid},
          {"resourceVersion", e.resource_version},
          {"ownerName", e.owner_name},
          {"ownerUid", e.owner_uid},
          {"raw", e.raw}};
}
Json Encode(const model::Tick& t) {
  return {{"type", "tick"},
          {"now", TimeText(t.now)},
          {"namespace", t.namespace_},
          {"name", t.name},
          {"trigger", t.trigger}};
}
Json Encode(const model::ActionOutcome& o) {
  return {{"type", "actionOutcome"},
          {"time", TimeText(o.time)},
          {"decisionSeq", o.decision_seq},
          {"verb", o.verb},
          {"kind", model::ObjectKindName(o.kind)},
          {"namespace", o.namespace_},
          {"name", o.name},
          {"result", o.result},
          {"payload", o.payload}};
}
Json Encode(const model::ConfigChange& c) {
  return {{"type", "configChange"}, {"time", TimeText(c.time)}, {"key", c.key}, {"value", c.value}};
}
Json Encode(const model::ActionIntent& a) {
  return {{"type", "actionIntent"},
          {"time", TimeText(a.time)},
          {"tickSeq", a.tick_seq},
          {"callIndex", a.call_index},
          {"verb", a.verb},
          {"kind", model::ObjectKindName(a.kind)},
          {"namespace", a.namespace_},
          {"name", a.name},
          {"payload", a.payload}};
}
Json Encode(const model::PassEnd& p) {
  return {{"type", "passEnd"},
          {"time", TimeText(p.time)},
          {"tickSeq", p.tick_seq},
          {"viewSeq", p.view_seq},
          {"namespace", p.namespace_},
          {"name", p.name},
          {"uid", p.uid},
          {"calls", p.calls},
          {"result", p.result},
          {"accounting", p.accounting}};
}

Result<model::Input> DecodeInput(const std::string& type, Reader& r) {
  if (type == "watchEvent") {
    model::WatchEvent e;
    auto t = model::ParseWatchEventType(r.Str("eventType"));
    if (!t.ok()) return Status::InvalidArgument("ledger record: bad eventType");
    e.type = *t;
    e.kind = r.Kind("kind");
    e.api_version = r.Str("apiVersion");
    e.namespace_ = r.Str("namespace");
    e.name = r.Str("name");
    e.uid = r.Str("uid");
    e.resource_version = r.Str("resourceVersion");
    e.owner_name = r.Str("ownerName");
    e.owner_uid = r.Str("ownerUid");
    e.raw = r.Str("raw");
    return model::Input(std::move(e));
  }
  if (type == "tick") {
    return model::Input(
        model::Tick{r.At("now"), r.Str("namespace"), r.Str("name"), r.Str("trigger")});
  }
  if (type == "actionOutcome") {
    return model::Input(model::ActionOutcome{r.At("time"), r.U64("decisionSeq"), r.Str("verb"),
                                             r.Kind("kind"), r.Str("namespace"), r.Str("name"),
                                             r.Str("result"), r.Str("payload")});
  }
  if (type == "configChange") {
    return model::Input(model::ConfigChange{r.At("time"), r.Str("key"), r.Str("value")});
  }
  if (type == "actionIntent") {
    return model::Input(model::ActionIntent{
        r.At("time"), r.U64("tickSeq"), static_cast<uint32_t>(r.U64("callIndex")), r.Str("verb"),
        r.Kind("kind"), r.Str("namespace"), r.Str("name"), r.Str("payload")});
  }
  if (type == "passEnd") {
    return model::Input(model::PassEnd{
        r.At("time"), r.U64("tickSeq"), r.U64("viewSeq"), r.Str("namespace"), r.Str("name"),
        r.Str("uid"), static_cast<uint32_t>(r.U64("calls")), r.Str("result"), r.Str("accounting")});
  }
  return Status::InvalidArgument("ledger record: unknown type");
}

}  // namespace

std::string KeyOfDecision(const model::Decision& d) {
  return d.cron_job.namespace_ + "/" + d.cron_job.name;
}

Json EncodeLedgerRecord(const store::LogRecord& record) {
  Json j = std::visit([](const auto& in) { return Encode(in); }, record.input);
  j["seq"] = record.seq;
  j["recordedAt"] = TimeText(record.recorded_at);
  if (record.raw_pruned) j["rawPruned"] = true;
  return j;
}

Result<store::LogRecord> DecodeLedgerRecord(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("ledger record: not an object");
  Reader r(j);
  store::LogRecord record;
  record.seq = r.U64("seq");
  record.recorded_at = r.At("recordedAt");
  record.raw_pruned = r.Bool("rawPruned");
  CL_ASSIGN_OR_RETURN(record.input, DecodeInput(r.Str("type"), r));
  CL_RETURN_IF_ERROR(r.status());
  return record;
}

}  // namespace cronledger::emit
