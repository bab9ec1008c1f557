// The allocator the build configured (cmake/allocator.cmake) is the one serving malloc.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

Mallctl FindMallctl() { return reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl")); }

TEST(Allocator, MallocIsServedByTheConfiguredAllocator) {
#if CRONLEDGER_ALLOCATOR_JEMALLOC
  const Mallctl mallctl = FindMallctl();
  ASSERT_NE(mallctl, nullptr) << "built with jemalloc, but jemalloc is not loaded";
  const char* version = nullptr;
  std::size_t len = sizeof version;
  ASSERT_EQ(mallctl("version", &version, &len, nullptr, 0), 0);
  EXPECT_EQ(std::string(version).substr(0, 2), "5.");
  // thread.allocated counts the bytes this thread has allocated through jemalloc: a malloc that
  // went to the C library's allocator would leave it unchanged.
  std::uint64_t before = 0;
  std::uint64_t after = 0;
  len = sizeof before;
  ASSERT_EQ(mallctl("thread.allocated", &before, &len, nullptr, 0), 0);
  void* volatile block = std::malloc(std::size_t{1} << 20);
  ASSERT_NE(block, nullptr);
  ASSERT_EQ(mallctl("thread.allocated", &after, &len, nullptr, 0), 0);
  std::free(block);
  EXPECT_GE(after - before, std::uint64_t{1} << 20);
#else
  EXPECT_EQ(FindMallctl(), nullptr) << "built with the system allocator, but jemalloc is loaded";
#endif
}

}  // namespace
