// The main() of every test executable: the process set-up cronledger's own main() does, then
// GoogleTest. Tests thereby run with the stacks the product runs with.
#include <gtest/gtest.h>

#include <cstdio>

#include "model/json_limits.h"

int main(int argc, char** argv) {
  if (const auto reserved = cronledger::model::ReserveThreadStacks(); !reserved.ok()) {
    std::fprintf(stderr, "warning: %s\n", reserved.message().c_str());
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
