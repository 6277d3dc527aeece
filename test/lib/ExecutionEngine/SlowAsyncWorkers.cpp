//===- SlowAsyncWorkers.cpp - Widens a window of MLIR's async runtime -----===//
//
// Preloaded into a process (LD_PRELOAD), this stands in for the async
// runtime's mlirAsyncRuntimeEmplaceToken: after the real one has marked a
// task's token done, a worker thread sleeps before it returns into the
// task's JIT code. The caller waiting on the token runs on meanwhile, so a
// step that frees its code before every worker has moved on crashes in
// every run instead of in one of many (test/amp-run/threads.test).
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <dlfcn.h>
#include <thread>

namespace {
const std::thread::id mainThread = std::this_thread::get_id();
} // namespace

extern "C" void mlirAsyncRuntimeEmplaceToken(void *token) {
  using Emplace = void (*)(void *);
  static const auto emplace = reinterpret_cast<Emplace>(
      dlsym(RTLD_NEXT, "mlirAsyncRuntimeEmplaceToken"));
  emplace(token);
  if (std::this_thread::get_id() != mainThread)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}
