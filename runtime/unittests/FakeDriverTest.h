//===- FakeDriverTest.h - Tests on the fake driver --------------*- C++ -*-===//
//
// The fixture of the tests that run the runtime on FakeCudaDriver.cpp, whose
// "device memory" is host memory.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_UNITTESTS_FAKEDRIVERTEST_H
#define AMP_RUNTIME_UNITTESTS_FAKEDRIVERTEST_H

#include "amp/Runtime/MgpuWrappers.h"

#include "gtest/gtest.h"

#include <dlfcn.h>

namespace amp::test {

/// Loads the fake driver afresh for every test and exposes its controls.
class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ampRuntimeClearError();
    library = dlopen(AMP_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    reset = reinterpret_cast<void (*)()>(dlsym(library, "fakeCudaReset"));
    fail = reinterpret_cast<void (*)(const char *, int)>(
        dlsym(library, "fakeCudaFail"));
    setDeviceCount = reinterpret_cast<void (*)(int)>(
        dlsym(library, "fakeCudaSetDeviceCount"));
    calls = reinterpret_cast<int (*)(const char *)>(
        dlsym(library, "fakeCudaCalls"));
    ASSERT_TRUE(reset && fail && setDeviceCount && calls);
    reset();
    ASSERT_EQ(ampRuntimeLoadDriver(AMP_FAKE_CUDA_DRIVER), AMP_RUNTIME_SUCCESS)
        << ampRuntimeGetLastErrorMessage();
  }
  void TearDown() override {
    mgpuSetDefaultDevice(0);
    ampRuntimeClearError();
    dlclose(library);
  }

  void *library = nullptr;
  void (*reset)() = nullptr;
  void (*fail)(const char *, int) = nullptr;
  void (*setDeviceCount)(int) = nullptr;
  int (*calls)(const char *) = nullptr;
};

} // namespace amp::test

#endif // AMP_RUNTIME_UNITTESTS_FAKEDRIVERTEST_H
