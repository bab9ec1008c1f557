#include "replay/source.h"

#include "model/inputs.h"

namespace cronledger::replay {

Status RecordSource::ScanDecisionBytes(const std::function<bool(uint64_t, std::string_view)>& fn) {
  std::string bytes;
  return ScanDecisions([&](const model::Decision& d) {
    bytes.clear();
    model::EncodeDecisionRecord(d, &bytes);
    return fn(d.seq, bytes);
  });
}

uint64_t LedgerSource::ApproximateRecords() {
  auto meta = ledger_.Meta();
  // A ledger whose meta cannot be read only loses its progress total; the scans report errors.
  if (!meta.ok()) return 0;
  return meta->last_input_seq + meta->last_decision_seq;
}

Status MemorySource::ScanInputs(const std::function<bool(const store::LogRecord&)>& fn) {
  for (const store::LogRecord& r : inputs_) {
    if (!fn(r)) break;
  }
  return Status::Ok();
}

Status MemorySource::ScanDecisions(const std::function<bool(const model::Decision&)>& fn) {
  for (const model::Decision& d : decisions_) {
    if (!fn(d)) break;
  }
  return Status::Ok();
}

}  // namespace cronledger::replay
