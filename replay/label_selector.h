#pragma once

// A Kubernetes label selector in kubectl's string syntax (`-l/--selector`), matched against the
// labels of the recorded CronJob objects (docs/replay.md). Requirements are comma-separated and
// all must hold:
//   key=value, key==value     the label is present with that value
//   key!=value                the label is absent or has another value
//   key in (a,b,...)          present with one of the values
//   key notin (a,b,...)       absent or none of the values
//   key                       present
//   !key                      absent
// Keys may carry a DNS prefix ("app.kubernetes.io/name"); values may be empty ("key=").

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace cronledger::replay {

class LabelSelector {
 public:
  // InvalidArgument naming the offending requirement. An empty string selects everything.
  static Result<LabelSelector> Parse(std::string_view text);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }
  // The selector in canonical form (requirements in the given order, no spaces).
  std::string ToString() const;

 private:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

}  // namespace cronledger::replay
