# Helpers shared by every folder's CMakeLists.txt.

# Warnings are errors on our own targets only; third-party headers come in as SYSTEM includes.
function(cronledger_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Werror -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual)
endfunction()

# cronledger_library(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Includes are relative to the repository root ("model/status.h").
function(cronledger_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  cronledger_warnings(${name})
endfunction()

# cronledger_test(NAME SOURCES ... DEPS ... [LABELS ...] [COST N])
# A GoogleTest executable (main() from tests/testing/test_main.cc) registered with CTest; tests are discovered when ctest runs so that
# building never executes test binaries. COST (CTest's property) marks executables holding a test
# that runs for a minute or more: `ctest -j` starts the costliest tests first, so a long test runs
# beside the short ones instead of alone at the end (a fresh build has no timing data to go by).
function(cronledger_test name)
  cmake_parse_arguments(ARG "" "COST" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} cronledger_test_main GTest::gmock)
  cronledger_warnings(${name})
  set(props ENVIRONMENT "CRONLEDGER_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  if(ARG_LABELS)
    list(APPEND props LABELS "${ARG_LABELS}")
  endif()
  if(ARG_COST)
    list(APPEND props COST ${ARG_COST})
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES ${props})
endfunction()
