#include "model/decision.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "model/byte_sink.h"
#include "model/objects.h"

namespace cronledger::model {
namespace {

constexpr std::array<std::pair<DecisionAction, std::string_view>, 7> kActions = {{
    {DecisionAction::kScheduled, "scheduled"},
    {DecisionAction::kSkipped, "skipped"},
    {DecisionAction::kCreateJob, "createJob"},
    {DecisionAction::kDeleteJob, "deleteJob"},
    {DecisionAction::kUpdateStatus, "updateStatus"},
    {DecisionAction::kEvent, "event"},
    {DecisionAction::kRequeue, "requeue"},
}};

Result<std::optional<Time>> OptNanoTime(const Json& j, std::string_view key,
                                        std::string_view path) {
  return OptTime(j, key, path);
}

Result<uint64_t> ReqUint(const Json& j, std::string_view key, std::string_view path) {
  CL_ASSIGN_OR_RETURN(auto v, OptInt(j, key, path));
  if (v.value_or(0) < 0) {
    return Status::InvalidArgument(std::string(path) + "." + std::string(key) + ": negative");
  }
  return static_cast<uint64_t>(v.value_or(0));
}

// The direct writer behind CanonicalDecisionBytes and AccountingStateBytes. It writes what
// DumpJson (nlohmann's serializer: compact, ensure_ascii=false, invalid UTF-8 replaced) writes for
// the same tree: object keys in byte order, integers in decimal. Strings that are plain
// printable ASCII without '"' or '\\' (nearly all of them) are copied; any other string, a
// double, and the embedded Json values go through nlohmann's own serializer, so escaping and
// number formatting are nlohmann's by construction.
//
// Bytes are written through a ByteSink (model/byte_sink.h): a raw cursor instead of
// std::string's out-of-line push_back/append per byte or field.
using Sink = ByteSink;

void AppendJsonValue(const Json& j, Sink* out) {
  out->WithString([&](std::string* s) {
    nlohmann::detail::serializer<Json> ser(nlohmann::detail::output_adapter<char, std::string>(*s),
                                           ' ', Json::error_handler_t::replace);
    ser.dump(j, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  });
}

// Strings that are plain printable ASCII (0x20..0x7e) without '"' or '\\' are written as they
// are between quotes; CopyPlain writes them and returns true, or returns false with nothing
// committed.
#if defined(__SSE2__)
// `s` between quotes at the cursor, sixteen bytes checked and stored at a
// time (SSE2, every x86-64 CPU). Returns false, with nothing committed, when a byte is not plain.
// A plain byte as a signed char is 0x20..0x7e: not below 0x20 (which takes every byte >= 0x80),
// not 0x7f, '"' or '\\'.
bool CopyPlain(std::string_view s, Sink* out) {
  char* const start = out->Need(s.size() + 2);
  char* p = start + 1;
  const char* q = s.data();
  size_t n = s.size();
  const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  auto bad = [&](__m128i v) {
    const __m128i b =
        _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    return _mm_movemask_epi8(b);
  };
  for (; n >= 16; n -= 16, q += 16, p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    if (bad(v) != 0) return false;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  }
  // The last n < 16 bytes: loads that overlap what was checked already (or each other) instead
  // of a copy to the stack and a 16-byte load of it (which stalls on store forwarding).
  if (n > 0 && s.size() >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + n - 16));
    if (bad(v) != 0) return false;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + n - 16), v);
    p += n;
  } else if (n >= 8) {
    uint64_t lo, hi;
    std::memcpy(&lo, q, 8);
    std::memcpy(&hi, q + n - 8, 8);
    if (bad(_mm_set_epi64x(static_cast<int64_t>(hi), static_cast<int64_t>(lo))) != 0) return false;
    std::memcpy(p, &lo, 8);
    std::memcpy(p + n - 8, &hi, 8);
    p += n;
  } else if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, q, 4);
    std::memcpy(&hi, q + n - 4, 4);
    constexpr int kSpaces = 0x20202020;  // plain: fills the unused lanes
    if (bad(_mm_set_epi32(kSpaces, kSpaces, static_cast<int>(hi), static_cast<int>(lo))) != 0) {
      return false;
    }
    std::memcpy(p, &lo, 4);
    std::memcpy(p + n - 4, &hi, 4);
    p += n;
  } else {
    for (; n > 0; --n, ++q) {
      const auto u = static_cast<unsigned char>(*q);
      if (u < 0x20 || u > 0x7e || u == '"' || u == '\\') return false;
      *p++ = *q;
    }
  }
  *start = '"';
  *p++ = '"';
  out->Advance(p);
  return true;
}
#else
bool CopyPlain(std::string_view s, Sink* out) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') return false;
  }
  char* p = out->Need(s.size() + 2);
  *p++ = '"';
  std::memcpy(p, s.data(), s.size());
  p += s.size();
  *p++ = '"';
  out->Advance(p);
  return true;
}
#endif

void AppendString(std::string_view s, Sink* out) {
  if (!CopyPlain(s, out)) AppendJsonValue(Json(std::string(s)), out);
}

template <typename Int>
void AppendInt(Int v, Sink* out) {
  char* p = out->Need(24);
  out->Advance(std::to_chars(p, p + 24, v).ptr);
}

// An embedded Json value (the job object, the status) as DumpJson writes it: objects (keys in
// the std::map's byte order), arrays, plain strings, integers, booleans and null written here,
// the same text nlohmann's compact serializer writes for them; strings that need escaping,
// doubles and anything else go through AppendJsonValue (the serializer itself).
void AppendJsonTree(const Json& j, Sink* out) {
  switch (j.type()) {
    case Json::value_t::object: {
      out->Put('{');
      bool first = true;
      for (const auto& [key, value] : j.get_ref<const Json::object_t&>()) {
        if (!first) out->Put(',');
        first = false;
        AppendString(key, out);
        out->Put(':');
        AppendJsonTree(value, out);
      }
      out->Put('}');
      return;
    }
    case Json::value_t::array: {
      out->Put('[');
      bool first = true;
      for (const Json& value : j.get_ref<const Json::array_t&>()) {
        if (!first) out->Put(',');
        first = false;
        AppendJsonTree(value, out);
      }
      out->Put(']');
      return;
    }
    case Json::value_t::string:
      AppendString(j.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      AppendInt(j.get<int64_t>(), out);
      return;
    case Json::value_t::number_unsigned:
      AppendInt(j.get<uint64_t>(), out);
      return;
    case Json::value_t::boolean:
      out->Put(j.get<bool>() ? std::string_view("true") : std::string_view("false"));
      return;
    case Json::value_t::null:
      out->Put("null");
      return;
    default:  // doubles, binary, discarded
      AppendJsonValue(j, out);
      return;
  }
}

constexpr char kTwoDigits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// `t` as AppendRfc3339Nano writes it, between quotes (RFC 3339 text is plain ASCII: no escaping
// to look for). The date part ("2006-01-02T") is what AppendRfc3339Nano writes for the start of
// the day, kept per thread for the last day seen (a decision stream's times fall on a few days;
// the calendar conversion was most of the formatting); the time of day and the fraction are
// written here the way AppendRfc3339Nano writes them. Outside years 0001-9999 (where the year
// is not four digits) AppendRfc3339Nano writes the whole text.
void AppendTime(Time t, Sink* out) {
  constexpr int64_t kFirst = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr int64_t kEnd = 253402300800;    // 10000-01-01T00:00:00Z
  const int64_t secs = t.unix_seconds();
  if (secs < kFirst || secs >= kEnd || t.nanos() < 0 || t.nanos() > 999999999) {
    out->Put('"');
    out->WithString([&](std::string* s) { AppendRfc3339Nano(t, s); });
    out->Put('"');
    return;
  }
  const int64_t shifted = secs - kFirst;  // >= 0: plain division is floor division
  const int64_t day = shifted / 86400;
  const auto sod = static_cast<int>(shifted - day * 86400);
  thread_local int64_t cached_day = -1;
  thread_local char date[11];
  if (day != cached_day) {
    std::string text;
    AppendRfc3339Nano(Time::FromUnix(kFirst + day * 86400), &text);
    std::memcpy(date, text.data(), sizeof date);  // "YYYY-MM-DDT" of "YYYY-MM-DDT00:00:00Z"
    cached_day = day;
  }
  char* p = out->Need(34);
  *p++ = '"';
  std::memcpy(p, date, sizeof date);
  p += sizeof date;
  const int hour = sod / 3600, minute = sod / 60 % 60, second = sod % 60;
  std::memcpy(p, kTwoDigits + 2 * hour, 2);
  p[2] = ':';
  std::memcpy(p + 3, kTwoDigits + 2 * minute, 2);
  p[5] = ':';
  std::memcpy(p + 6, kTwoDigits + 2 * second, 2);
  p += 8;
  if (t.nanos() != 0) {  // ".%09d" without its trailing zeros
    int64_t v = t.nanos();
    p[0] = '.';
    for (int i = 9; i >= 1; --i) {
      p[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    size_t n = 10;
    while (p[n - 1] == '0') --n;
    p += n;
  }
  *p++ = 'Z';
  *p++ = '"';
  out->Advance(p);
}

void AppendOptTime(const std::optional<Time>& t, Sink* out) {
  if (t) {
    AppendTime(*t, out);
  } else {
    out->Put("null");
  }
}

// A CBOR head: major type and argument, in the shortest form (RFC 8949 §3), as binary_writer
// writes every head.
void CborHead(uint8_t major, uint64_t n, ByteSink* out) {
  char* p = out->Need(9);
  const auto m = static_cast<char>(major << 5);
  int bytes = 0;
  if (n <= 0x17) {
    *p++ = static_cast<char>(m | static_cast<char>(n));
  } else if (n <= 0xff) {
    *p++ = static_cast<char>(m | 24);
    bytes = 1;
  } else if (n <= 0xffff) {
    *p++ = static_cast<char>(m | 25);
    bytes = 2;
  } else if (n <= 0xffffffff) {
    *p++ = static_cast<char>(m | 26);
    bytes = 4;
  } else {
    *p++ = static_cast<char>(m | 27);
    bytes = 8;
  }
  for (int i = bytes - 1; i >= 0; --i) *p++ = static_cast<char>(n >> (8 * i));
  out->Advance(p);
}

void CborString(std::string_view s, ByteSink* out) {
  CborHead(3, s.size(), out);
  out->Put(s);
}

}  // namespace

void AppendCbor(const Json& j, ByteSink* out) {
  switch (j.type()) {
    case Json::value_t::null:
      out->Byte(0xf6);
      return;
    case Json::value_t::boolean:
      out->Byte(j.get<bool>() ? 0xf5 : 0xf4);
      return;
    case Json::value_t::number_integer: {
      const auto v = j.get<int64_t>();
      if (v >= 0) {
        CborHead(0, static_cast<uint64_t>(v), out);
      } else {
        CborHead(1, static_cast<uint64_t>(-1 - v), out);
      }
      return;
    }
    case Json::value_t::number_unsigned:
      CborHead(0, j.get<uint64_t>(), out);
      return;
    case Json::value_t::string:
      CborString(j.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::array: {
      const auto& a = j.get_ref<const Json::array_t&>();
      CborHead(4, a.size(), out);
      for (const Json& v : a) AppendCbor(v, out);
      return;
    }
    case Json::value_t::object: {
      const auto& o = j.get_ref<const Json::object_t&>();
      CborHead(5, o.size(), out);
      for (const auto& [key, value] : o) {
        CborString(key, out);
        AppendCbor(value, out);
      }
      return;
    }
    default:  // doubles, binary, discarded: binary_writer itself
      out->WithString([&](std::string* s) {
        Json::to_cbor(j, nlohmann::detail::output_adapter<char, std::string>(*s));
      });
      return;
  }
}

std::string_view DecisionActionName(DecisionAction a) {
  for (const auto& [action, name] : kActions) {
    if (action == a) return name;
  }
  return "unknown";
}

Result<DecisionAction> ParseDecisionAction(std::string_view s) {
  for (const auto& [action, name] : kActions) {
    if (name == s) return action;
  }
  return Status::InvalidArgument("unknown decision action \"" + std::string(s) + "\"");
}

PolicySnapshot SnapshotPolicy(const CronJobSpec& spec) {
  PolicySnapshot p;
  p.schedule = spec.schedule;
  p.time_zone = spec.time_zone;
  p.concurrency_policy = spec.concurrency_policy;
  p.starting_deadline_seconds = spec.starting_deadline_seconds;
  p.suspend = spec.suspend.value_or(false);
  return p;
}

Json EncodeDecision(const Decision& d) {
  // The canonical bytes are the one encoding of a decision; the tree is read back from them.
  auto tree = ParseJson(CanonicalDecisionBytes(d));
  CL_CHECK(tree.ok());  // the writer emits JSON, nested no deeper than the objects it carries
  return std::move(tree).value();
}

Result<Decision> DecodeDecision(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("decision: expected object");
  Decision d;
  CL_ASSIGN_OR_RETURN(d.seq, ReqUint(j, "seq", "decision"));
  CL_ASSIGN_OR_RETURN(auto time, OptNanoTime(j, "time", "decision"));
  if (!time) return Status::InvalidArgument("decision.time: required");
  d.time = *time;
  CL_ASSIGN_OR_RETURN(Json cj, OptObject(j, "cronJob", "decision"));
  CL_ASSIGN_OR_RETURN(auto ns, OptString(cj, "namespace", "decision.cronJob"));
  CL_ASSIGN_OR_RETURN(auto name, OptString(cj, "name", "decision.cronJob"));
  CL_ASSIGN_OR_RETURN(auto uid, OptString(cj, "uid", "decision.cronJob"));
  d.cron_job = {ns.value_or(""), name.value_or(""), uid.value_or("")};
  CL_ASSIGN_OR_RETURN(auto action, OptString(j, "action", "decision"));
  CL_ASSIGN_OR_RETURN(d.action, ParseDecisionAction(action.value_or("")));
  CL_ASSIGN_OR_RETURN(d.scheduled_time, OptNanoTime(j, "scheduledTime", "decision"));
  CL_ASSIGN_OR_RETURN(d.range_end, OptNanoTime(j, "rangeEnd", "decision"));
  CL_ASSIGN_OR_RETURN(auto reason, OptString(j, "reason", "decision"));
  d.reason = reason.value_or("");
  CL_ASSIGN_OR_RETURN(Json job, OptObject(j, "job", "decision"));
  CL_ASSIGN_OR_RETURN(d.job_name, OptString(job, "name", "decision.job"));
  if (job.contains("object")) d.job_object = job["object"];
  CL_ASSIGN_OR_RETURN(d.event_type, OptString(j, "eventType", "decision"));
  CL_ASSIGN_OR_RETURN(d.message, OptString(j, "message", "decision"));
  CL_ASSIGN_OR_RETURN(auto requeue, OptInt(j, "requeueAfterNanos", "decision"));
  if (requeue) d.requeue_after = Duration(*requeue);
  if (j.contains("status")) d.status = j["status"];
  CL_ASSIGN_OR_RETURN(Json cause, OptObject(j, "cause", "decision"));
  CL_ASSIGN_OR_RETURN(d.cause.tick_seq, ReqUint(cause, "tickSeq", "decision.cause"));
  CL_ASSIGN_OR_RETURN(d.cause.input_seq, ReqUint(cause, "inputSeq", "decision.cause"));
  CL_ASSIGN_OR_RETURN(auto trigger, OptString(cause, "trigger", "decision.cause"));
  d.cause.trigger = trigger.value_or("");
  CL_ASSIGN_OR_RETURN(Json policy, OptObject(j, "policy", "decision"));
  CL_ASSIGN_OR_RETURN(auto schedule, OptString(policy, "schedule", "decision.policy"));
  d.policy.schedule = schedule.value_or("");
  CL_ASSIGN_OR_RETURN(d.policy.time_zone, OptString(policy, "timeZone", "decision.policy"));
  CL_ASSIGN_OR_RETURN(auto cp, OptString(policy, "concurrencyPolicy", "decision.policy"));
  d.policy.concurrency_policy = cp.value_or("");
  CL_ASSIGN_OR_RETURN(d.policy.starting_deadline_seconds,
                      OptInt(policy, "startingDeadlineSeconds", "decision.policy"));
  CL_ASSIGN_OR_RETURN(auto suspend, OptBool(policy, "suspend", "decision.policy"));
  d.policy.suspend = suspend.value_or(false);
  return d;
}

std::string CanonicalDecisionBytes(const Decision& d) {
  std::string out;
  out.reserve(512);
  AppendCanonicalDecisionBytes(d, &out);
  return out;
}

// The keys of EncodeDecision in the order nlohmann's std::map holds them (byte order).
void AppendCanonicalDecisionArray(const std::vector<Decision>& ds, std::string* out) {
  *out += '[';
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i > 0) *out += ',';
    AppendCanonicalDecisionBytes(ds[i], out);
  }
  *out += ']';
}

void AppendCanonicalDecisionBytes(const Decision& d, std::string* s) {
  Sink sink(s);
  Sink* out = &sink;
  out->Put("{\"action\":");
  AppendString(DecisionActionName(d.action), out);
  out->Put(",\"cause\":{\"inputSeq\":");
  AppendInt(d.cause.input_seq, out);
  out->Put(",\"tickSeq\":");
  AppendInt(d.cause.tick_seq, out);
  out->Put(",\"trigger\":");
  AppendString(d.cause.trigger, out);
  out->Put("},\"cronJob\":{\"name\":");
  AppendString(d.cron_job.name, out);
  out->Put(",\"namespace\":");
  AppendString(d.cron_job.namespace_, out);
  out->Put(",\"uid\":");
  AppendString(d.cron_job.uid, out);
  out->Put('}');
  if (d.event_type) {
    out->Put(",\"eventType\":");
    AppendString(*d.event_type, out);
  }
  if (d.job_name || !d.job_object.is_null()) {
    out->Put(",\"job\":{");
    if (d.job_name) {
      out->Put("\"name\":");
      AppendString(*d.job_name, out);
    }
    if (!d.job_object.is_null()) {
      out->Put(d.job_name ? ",\"object\":" : "\"object\":");
      AppendJsonTree(d.job_object, out);
    }
    out->Put('}');
  }
  if (d.message) {
    out->Put(",\"message\":");
    AppendString(*d.message, out);
  }
  out->Put(",\"policy\":{\"concurrencyPolicy\":");
  AppendString(d.policy.concurrency_policy, out);
  out->Put(",\"schedule\":");
  AppendString(d.policy.schedule, out);
  out->Put(",\"startingDeadlineSeconds\":");
  if (d.policy.starting_deadline_seconds) {
    AppendInt(*d.policy.starting_deadline_seconds, out);
  } else {
    out->Put("null");
  }
  out->Put(d.policy.suspend ? ",\"suspend\":true" : ",\"suspend\":false");
  out->Put(",\"timeZone\":");
  if (d.policy.time_zone) {
    AppendString(*d.policy.time_zone, out);
  } else {
    out->Put("null");
  }
  out->Put('}');
  if (d.range_end) {
    out->Put(",\"rangeEnd\":");
    AppendTime(*d.range_end, out);
  }
  if (!d.reason.empty()) {
    out->Put(",\"reason\":");
    AppendString(d.reason, out);
  }
  if (d.requeue_after) {
    out->Put(",\"requeueAfterNanos\":");
    AppendInt(d.requeue_after->count(), out);
    out->Put(",\"requeueAfterSeconds\":");
    AppendJsonValue(Json(static_cast<double>(d.requeue_after->count()) / 1e9), out);
  }
  if (d.scheduled_time) {
    out->Put(",\"scheduledTime\":");
    AppendTime(*d.scheduled_time, out);
  }
  out->Put(",\"seq\":");
  AppendInt(d.seq, out);
  if (!d.status.is_null()) {
    out->Put(",\"status\":");
    AppendJsonTree(d.status, out);
  }
  out->Put(",\"time\":");
  AppendTime(d.time, out);
  out->Put('}');
}

Json EncodeAccountingState(const AccountingState& s) {
  auto tree = ParseJson(AccountingStateBytes(s));
  CL_CHECK(tree.ok());
  return std::move(tree).value();
}

std::string AccountingStateBytes(const AccountingState& s) {
  std::string out;
  out.reserve(160);
  AppendAccountingStateBytes(s, &out);
  return out;
}

void AppendAccountingStateBytes(const AccountingState& s, std::string* out) {
  Sink sink(out);
  sink.Put("{\"accountedThrough\":");
  AppendOptTime(s.accounted_through, &sink);
  sink.Put(",\"blockedKey\":");
  AppendString(s.blocked_key, &sink);
  sink.Put(",\"blockedReason\":");
  AppendString(s.blocked_reason, &sink);
  sink.Put(",\"blockedUntil\":");
  AppendOptTime(s.blocked_until, &sink);
  sink.Put(",\"pendingReason\":");
  AppendString(s.pending_reason, &sink);
  sink.Put(",\"pendingSlot\":");
  AppendOptTime(s.pending_slot, &sink);
  sink.Put('}');
}

Result<AccountingState> DecodeAccountingState(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("accountingState: expected object");
  const std::string_view path = "accountingState";
  AccountingState s;
  CL_ASSIGN_OR_RETURN(s.accounted_through, OptNanoTime(j, "accountedThrough", path));
  CL_ASSIGN_OR_RETURN(s.pending_slot, OptNanoTime(j, "pendingSlot", path));
  CL_ASSIGN_OR_RETURN(auto pending_reason, OptString(j, "pendingReason", path));
  s.pending_reason = pending_reason.value_or("");
  CL_ASSIGN_OR_RETURN(auto blocked_reason, OptString(j, "blockedReason", path));
  s.blocked_reason = blocked_reason.value_or("");
  CL_ASSIGN_OR_RETURN(auto blocked_key, OptString(j, "blockedKey", path));
  s.blocked_key = blocked_key.value_or("");
  CL_ASSIGN_OR_RETURN(s.blocked_until, OptNanoTime(j, "blockedUntil", path));
  return s;
}

}  // namespace cronledger::model
