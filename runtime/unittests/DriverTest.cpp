//===- DriverTest.cpp - No-device path and the mgpu* wrappers -------------===//
//
// The runtime loads the driver at run time; here it is pointed at a missing
// file (the no-device path every GPU-less machine takes) and at a fake
// driver (FakeCudaDriver.cpp) whose "device memory" is host memory.
//
//===----------------------------------------------------------------------===//

#include "FakeDriverTest.h"
#include "amp/Runtime/MgpuWrappers.h"

#include "gtest/gtest.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using amp::test::FakeDriver;

std::string lastError() { return ampRuntimeGetLastErrorMessage(); }

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0;
}

template <int Rank> struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

class NoDevice : public ::testing::Test {
protected:
  void SetUp() override { ampRuntimeClearError(); }
  void TearDown() override {
    unsetenv("AMP_CUDA_DRIVER_PATH");
    ampRuntimeClearError();
  }
};

TEST_F(NoDevice, MissingDriverFileIsReported) {
  EXPECT_EQ(ampRuntimeLoadDriver("/nonexistent/libcuda.so.1"),
            AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_TRUE(startsWith(lastError(), "no CUDA device: /nonexistent/"
                                      "libcuda.so.1 not found ("))
      << lastError();
}

// The first entry point loads the driver ($AMP_CUDA_DRIVER_PATH here), fails
// cleanly, and every later one returns at once.
TEST_F(NoDevice, EntryPointsReportAndReturnNull) {
  ampRuntimeLoadDriver("/nonexistent/libcuda.so.1");
  ampRuntimeClearError();
  setenv("AMP_CUDA_DRIVER_PATH", "/nonexistent/libcuda.so.1", 1);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_NO_DEVICE);
  std::string first = lastError();
  EXPECT_TRUE(startsWith(first, "no CUDA device: /nonexistent/libcuda.so.1 "
                                "not found"))
      << first;
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
  EXPECT_EQ(mgpuModuleLoad(nullptr, 0), nullptr);
  mgpuStreamSynchronize(nullptr);
  float a[4] = {}, b[4] = {}, c[4] = {};
  Descriptor<2> da{a, a, 0, {2, 2}, {2, 1}}, db{b, b, 0, {2, 2}, {2, 1}},
      dc{c, c, 0, {2, 2}, {2, 1}};
  ampMatmul(2, &da, &db, &dc, AMP_ELEMENT_F32, AMP_ELEMENT_F32,
            AMP_ELEMENT_F32, 1.0f, 0.0f, nullptr, 1);
  EXPECT_EQ(lastError(), first);
}

// What a machine without a GPU does by default (skipped where a driver is).
TEST_F(NoDevice, DefaultDriverAbsentOnThisMachine) {
  if (void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(driver);
    GTEST_SKIP() << "this machine has libcuda.so.1";
  }
  unsetenv("AMP_CUDA_DRIVER_PATH");
  EXPECT_EQ(ampRuntimeLoadDriver(nullptr), AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_TRUE(startsWith(lastError(),
                         "no CUDA device: libcuda.so.1 not found ("))
      << lastError();
}

TEST_F(NoDevice, LibraryWithoutDriverSymbolsIsRejected) {
  EXPECT_EQ(ampRuntimeLoadDriver("libm.so.6"), AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_EQ(lastError(), "no CUDA device: libm.so.6 has no symbol "
                         "cuGetErrorName (the driver is older than CUDA 12 "
                         "or not a CUDA driver)");
}

TEST_F(FakeDriver, MemoryRoundTrip) {
  CUstream stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr) << lastError();
  const size_t count = 10;
  auto *device =
      static_cast<uint32_t *>(mgpuMemAlloc(count * 4, stream, false));
  ASSERT_NE(device, nullptr);
  float one = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &one, 4);
  mgpuMemset32(device, bits, count, stream);
  mgpuMemset16(device, 0x3c00, 2, stream); // the first 4 bytes
  std::vector<uint32_t> host(count, 0);
  mgpuMemcpy(host.data(), device, count * 4, stream);
  mgpuStreamSynchronize(stream);
  mgpuMemFree(device, stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
  EXPECT_EQ(host[0], 0x3c003c00u);
  for (size_t i = 1; i < count; ++i)
    EXPECT_EQ(host[i], bits);
  EXPECT_EQ(calls("cuMemAllocAsync"), 1);
  EXPECT_EQ(calls("cuMemFreeAsync"), 1);
  // Initialization happened once, with the pool set to keep its memory.
  EXPECT_EQ(calls("cuInit"), 1);
  EXPECT_EQ(calls("cuMemPoolSetAttribute"), 1);
}

TEST_F(FakeDriver, HostSharedMemoryIsManaged) {
  void *shared = mgpuMemAlloc(16, nullptr, true);
  ASSERT_NE(shared, nullptr);
  mgpuMemFree(shared, nullptr);
  EXPECT_EQ(calls("cuMemAllocManaged"), 1);
  EXPECT_EQ(calls("cuMemFree_v2"), 1);
  EXPECT_EQ(calls("cuMemFreeAsync"), 0);
  EXPECT_EQ(mgpuMemAlloc(0, nullptr, false), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS);
}

TEST_F(FakeDriver, FailureNamesCallAndEntryPointThenSticks) {
  fail("cuMemAllocAsync", CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(mgpuMemAlloc(1 << 20, nullptr, false), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_CUDA);
  EXPECT_EQ(lastError(), "cuMemAllocAsync failed in mgpuMemAlloc: "
                         "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(calls("cuStreamCreate"), 0);
  ampRuntimeClearError();
  EXPECT_NE(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(calls("cuStreamCreate"), 1);
}

TEST_F(FakeDriver, CuInitWithoutDeviceIsNoDevice) {
  fail("cuInit", CUDA_ERROR_NO_DEVICE);
  EXPECT_EQ(mgpuEventCreate(), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_EQ(lastError(),
            "no CUDA device: cuInit failed in mgpuEventCreate: "
            "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
}

TEST_F(FakeDriver, ZeroDevicesIsNoDevice) {
  setDeviceCount(0);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_NO_DEVICE);
  EXPECT_EQ(lastError(), "no CUDA device: the driver reports no devices (in "
                         "mgpuStreamCreate)");
}

TEST_F(FakeDriver, UnknownStatusIsShownAsNumber) {
  fail("cuEventRecord", 999);
  mgpuEventRecord(mgpuEventCreate(), nullptr);
  EXPECT_EQ(lastError(), "cuEventRecord failed in mgpuEventRecord: CUresult "
                         "999 (no description)");
}

TEST_F(FakeDriver, DefaultDeviceOutOfRange) {
  mgpuSetDefaultDevice(3);
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "mgpuStreamCreate: default device 3 requested, the "
                         "driver has 1");
}

// The primary context is made current once per thread, not per call.
TEST_F(FakeDriver, ContextIsBoundOncePerThread) {
  mgpuStreamSynchronize(nullptr);
  mgpuStreamSynchronize(nullptr);
  EXPECT_EQ(calls("cuDevicePrimaryCtxRetain"), 1);
  EXPECT_EQ(calls("cuCtxSetCurrent"), 1);
  std::thread([] { mgpuStreamSynchronize(nullptr); }).join();
  EXPECT_EQ(calls("cuCtxSetCurrent"), 2);
  EXPECT_EQ(calls("cuDevicePrimaryCtxRetain"), 1);
}

TEST_F(FakeDriver, LaunchChecksDimensionsAndSharedMemory) {
  CUmodule module = mgpuModuleLoad(nullptr, 0);
  CUfunction function = mgpuModuleGetFunction(module, "kernel");
  ASSERT_NE(function, nullptr);
  mgpuLaunchKernel(function, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr,
                   0);
  EXPECT_EQ(calls("cuFuncSetAttribute"), 0);
  mgpuLaunchKernel(function, 4, 1, 1, 128, 1, 1, 64 * 1024, nullptr, nullptr,
                   nullptr, 0);
  EXPECT_EQ(calls("cuFuncSetAttribute"), 1);
  EXPECT_EQ(calls("cuLaunchKernel"), 2);
  mgpuLaunchClusterKernel(function, 4, 4, 1, 16, 1, 1, 128, 1, 1, 0, nullptr,
                          nullptr, nullptr);
  EXPECT_EQ(calls("cuLaunchKernelEx"), 1);
  EXPECT_EQ(calls("cuFuncSetAttribute"), 2); // 16 blocks: non-portable
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
  mgpuLaunchKernel(function, -1, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr,
                   0);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "mgpuLaunchKernel: grid size -1 is out of range");
  EXPECT_EQ(calls("cuLaunchKernel"), 2);
  mgpuModuleUnload(module);
}

TEST_F(FakeDriver, KernelsAreLookedUpOncePerModule) {
  CUmodule module = mgpuModuleLoad(nullptr, 0);
  CUfunction first = mgpuModuleGetFunction(module, "kernel");
  EXPECT_EQ(mgpuModuleGetFunction(module, "kernel"), first);
  EXPECT_EQ(calls("cuModuleGetFunction"), 1);
  mgpuModuleGetFunction(module, "other_kernel");
  EXPECT_EQ(calls("cuModuleGetFunction"), 2);
  // A module loaded again (the driver may reuse the handle) is asked again.
  mgpuModuleUnload(module);
  module = mgpuModuleLoad(nullptr, 0);
  mgpuModuleGetFunction(module, "kernel");
  EXPECT_EQ(calls("cuModuleGetFunction"), 3);
  // So is one after the driver is loaded again (its handles are new ones,
  // whatever their values).
  ASSERT_EQ(ampRuntimeLoadDriver(AMP_FAKE_CUDA_DRIVER), AMP_RUNTIME_SUCCESS);
  mgpuModuleGetFunction(mgpuModuleLoad(nullptr, 0), "kernel");
  EXPECT_EQ(calls("cuModuleGetFunction"), 4);
  mgpuModuleUnload(module);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
}

TEST_F(FakeDriver, HostRegisterNeedsDenseMemRef) {
  float data[12];
  Descriptor<2> dense{data, data, 0, {3, 4}, {4, 1}};
  mgpuMemHostRegisterMemRef(2, &dense, 4);
  mgpuMemHostUnregisterMemRef(2, &dense, 4);
  EXPECT_EQ(calls("cuMemHostRegister_v2"), 1);
  EXPECT_EQ(calls("cuMemHostUnregister"), 1);
  Descriptor<2> strided{data, data, 0, {3, 2}, {4, 2}};
  mgpuMemHostRegisterMemRef(2, &strided, 4);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "mgpuMemHostRegisterMemRef: only dense memrefs can "
                         "be registered (dimension 1 has stride 2, expected "
                         "1)");
}

// Bad operands are rejected before the device is touched.
TEST_F(FakeDriver, MatmulRejectsBadOperandsBeforeTheDevice) {
  uint16_t a[8], b[8], c[8];
  Descriptor<2> da{a, a, 0, {2, 4}, {8, 2}}, db{b, b, 0, {4, 2}, {2, 1}},
      dc{c, c, 0, {2, 2}, {2, 1}};
  ampMatmul(2, &da, &db, &dc, AMP_ELEMENT_F16, AMP_ELEMENT_F16,
            AMP_ELEMENT_F16, 1.0f, 0.0f, nullptr, 3);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "ampMatmul: operand A (1x2x4, strides [0, 8, 2]) is "
                         "not contiguous in either inner dimension: cuBLASLt "
                         "needs a unit stride in one of them");
  ampRuntimeClearError();
  ampMatmul(4, &da, &db, &dc, AMP_ELEMENT_F16, AMP_ELEMENT_F16,
            AMP_ELEMENT_F16, 1.0f, 0.0f, nullptr, 3);
  EXPECT_EQ(lastError(), "ampMatmul: operands have rank 4 (expected 2, or 3 "
                         "for a batched matmul)");
  EXPECT_EQ(calls("cuInit"), 0);
}

} // namespace
