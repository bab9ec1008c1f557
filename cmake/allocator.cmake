# The allocator every executable links: jemalloc by default (README "Dependencies" says why), the
# C library's malloc with -DCRONLEDGER_ALLOCATOR=system. Sanitizer and fuzzing builds always use
# the system allocator: ASan and libFuzzer interpose malloc themselves.
set(CRONLEDGER_ALLOCATOR "jemalloc" CACHE STRING "Allocator linked into executables: jemalloc or system")
set_property(CACHE CRONLEDGER_ALLOCATOR PROPERTY STRINGS jemalloc system)

set(CRONLEDGER_ALLOCATOR_IN_USE "${CRONLEDGER_ALLOCATOR}")
if(CRONLEDGER_SANITIZE OR CRONLEDGER_FUZZ)
  set(CRONLEDGER_ALLOCATOR_IN_USE "system")
endif()

if(CRONLEDGER_ALLOCATOR_IN_USE STREQUAL "jemalloc")
  find_library(CRONLEDGER_JEMALLOC_LIBRARY NAMES jemalloc)
  if(NOT CRONLEDGER_JEMALLOC_LIBRARY)
    message(FATAL_ERROR "jemalloc not found: install libjemalloc-dev (scripts/install-deps.sh does), "
                        "or configure with -DCRONLEDGER_ALLOCATOR=system")
  endif()
  # Linked by flag rather than per target so every executable (the binary, tests, benchmarks)
  # gets it; --no-as-needed keeps the library even though no symbol names it explicitly, and its
  # place before the C library in the load order makes its malloc the process's malloc.
  string(APPEND CMAKE_EXE_LINKER_FLAGS
         " -Wl,--push-state,--no-as-needed ${CRONLEDGER_JEMALLOC_LIBRARY} -Wl,--pop-state")
elseif(NOT CRONLEDGER_ALLOCATOR_IN_USE STREQUAL "system")
  message(FATAL_ERROR "CRONLEDGER_ALLOCATOR must be jemalloc or system, not \"${CRONLEDGER_ALLOCATOR}\"")
endif()
message(STATUS "cronledger: allocator ${CRONLEDGER_ALLOCATOR_IN_USE}")
