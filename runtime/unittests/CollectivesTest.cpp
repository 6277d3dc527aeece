//===- CollectivesTest.cpp - The sums of data-parallel steps ---------------===//
//
// ampAllReduceSum and the communicator on the fake driver: without a
// communicator (a world of one) and, where the runtime is built with NCCL,
// with the fake driver's NCCL ($AMP_NCCL_PATH) and with the real library's
// symbols.
//
//===----------------------------------------------------------------------===//

#include "FakeDriverTest.h"
#include "amp/Runtime/AmpRuntime.h"
#if AMP_HAVE_NCCL
#include "Nccl.h"
#endif

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

class Collectives : public amp::test::FakeDriver {
protected:
  void TearDown() override {
    ampRuntimeDestroyCommunicator();
    unsetenv("AMP_NCCL_PATH");
    FakeDriver::TearDown();
  }
};

std::string lastError() { return ampRuntimeGetLastErrorMessage(); }

TEST_F(Collectives, WorldOfOneCopies) {
  EXPECT_EQ(ampRuntimeWorldSize(), 1);
  float send[3] = {1.5f, -2.0f, 3.25f}, recv[3] = {};
  ampAllReduceSum(send, recv, 3, AMP_ELEMENT_F32, nullptr);
  ASSERT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
  EXPECT_EQ(recv[0], 1.5f);
  EXPECT_EQ(recv[1], -2.0f);
  EXPECT_EQ(recv[2], 3.25f);
  EXPECT_EQ(calls("cuMemcpyAsync"), 1);
  // 16-bit elements: two bytes each, and a sum in place copies nothing.
  uint16_t half[4] = {1, 2, 3, 4}, halfOut[4] = {};
  ampAllReduceSum(half, halfOut, 3, AMP_ELEMENT_BF16, nullptr);
  EXPECT_EQ(halfOut[2], 3);
  EXPECT_EQ(halfOut[3], 0);
  ampAllReduceSum(half, half, 4, AMP_ELEMENT_F16, nullptr);
  ampAllReduceSum(half, halfOut, 0, AMP_ELEMENT_F16, nullptr);
  EXPECT_EQ(calls("cuMemcpyAsync"), 2);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
}

TEST_F(Collectives, BadSumsAreRejected) {
  int32_t a[2] = {}, b[2] = {};
  ampAllReduceSum(a, b, 2, AMP_ELEMENT_I32, nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "ampAllReduceSum: 2 elements of type code 3: sums "
                         "take a count >= 0 of f32 (0), f16 (1) or bf16 (2) "
                         "elements");
  ampRuntimeClearError();
  ampAllReduceSum(a, b, -1, AMP_ELEMENT_F32, nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(calls("cuMemcpyAsync"), 0);
}

TEST_F(Collectives, BadCommunicatorsAreRejected) {
  EXPECT_EQ(ampRuntimeInitCommunicator(2, 0, nullptr),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "ampRuntimeInitCommunicator: rank 0 of 2 without a unique id: "
            "needs 0 <= rank < size, and the id of rank 0's "
            "ampRuntimeGetNcclUniqueId unless size is 1");
  ampRuntimeClearError();
  char id[AMP_NCCL_UNIQUE_ID_BYTES] = {};
  EXPECT_EQ(ampRuntimeInitCommunicator(2, 2, id),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ampRuntimeWorldSize(), 1);
}

#if AMP_HAVE_NCCL
TEST_F(Collectives, MissingNcclIsReported) {
  setenv("AMP_NCCL_PATH", "/nonexistent/libnccl.so.2", 1);
  EXPECT_EQ(ampRuntimeInitCommunicator(1, 0, nullptr), AMP_RUNTIME_ERROR_NCCL);
  EXPECT_EQ(lastError().rfind("ampRuntimeInitCommunicator: cannot load NCCL "
                              "/nonexistent/libnccl.so.2 (",
                              0),
            0u)
      << lastError();
  EXPECT_EQ(ampRuntimeWorldSize(), 1);
}

TEST_F(Collectives, OneRankCommunicatorSumsThroughNccl) {
  setenv("AMP_NCCL_PATH", AMP_FAKE_CUDA_DRIVER, 1);
  ASSERT_EQ(ampRuntimeInitCommunicator(1, 0, nullptr), AMP_RUNTIME_SUCCESS)
      << lastError();
  EXPECT_EQ(calls("ncclGetUniqueId"), 1);
  EXPECT_EQ(ampRuntimeWorldSize(), 1);
  float send[2] = {4.0f, 5.0f}, recv[2] = {};
  ampAllReduceSum(send, recv, 2, AMP_ELEMENT_F32, nullptr);
  ASSERT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS) << lastError();
  EXPECT_EQ(calls("ncclAllReduce"), 1);
  EXPECT_EQ(calls("cuMemcpyAsync"), 0);
  EXPECT_EQ(recv[1], 5.0f);
  EXPECT_EQ(ampRuntimeInitCommunicator(1, 0, nullptr),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  ampRuntimeClearError();
  ampRuntimeDestroyCommunicator();
  EXPECT_EQ(calls("ncclCommDestroy"), 1);
  ampAllReduceSum(send, recv, 2, AMP_ELEMENT_F32, nullptr);
  EXPECT_EQ(calls("ncclAllReduce"), 1);
  EXPECT_EQ(calls("cuMemcpyAsync"), 1);
}

TEST_F(Collectives, RanksJoinWithRankZerosId) {
  setenv("AMP_NCCL_PATH", AMP_FAKE_CUDA_DRIVER, 1);
  char id[AMP_NCCL_UNIQUE_ID_BYTES];
  ASSERT_EQ(ampRuntimeGetNcclUniqueId(id), AMP_RUNTIME_SUCCESS) << lastError();
  ASSERT_EQ(ampRuntimeInitCommunicator(4, 3, id), AMP_RUNTIME_SUCCESS)
      << lastError();
  EXPECT_EQ(ampRuntimeWorldSize(), 4);
}

TEST_F(Collectives, NcclFailuresNameTheCall) {
  setenv("AMP_NCCL_PATH", AMP_FAKE_CUDA_DRIVER, 1);
  ASSERT_EQ(ampRuntimeInitCommunicator(1, 0, nullptr), AMP_RUNTIME_SUCCESS);
  fail("ncclAllReduce", ncclInvalidUsage);
  uint16_t send[1] = {}, recv[1] = {};
  ampAllReduceSum(send, recv, 1, AMP_ELEMENT_F16, nullptr);
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_NCCL);
  EXPECT_EQ(lastError(), "ncclAllReduce failed in ampAllReduceSum: "
                         "ncclInvalidUsage (invalid usage (fake))");
}

// The NCCL found at configure time has every function the runtime calls,
// and a version with bf16 sums (2.10).
TEST(Nccl, TheConfiguredLibraryLoads) {
  amp::runtime::NcclLibrary nccl;
  std::string error;
  ASSERT_TRUE(amp::runtime::loadNccl(AMP_NCCL_LIBRARY, nccl, error)) << error;
  int version = 0;
  ASSERT_EQ(nccl.ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, 21000);
}
#else
TEST_F(Collectives, CommunicatorsNeedNccl) {
  EXPECT_EQ(ampRuntimeInitCommunicator(1, 0, nullptr), AMP_RUNTIME_ERROR_NCCL);
  EXPECT_EQ(lastError(), "ampRuntimeInitCommunicator: this runtime was built "
                         "without NCCL (CMake found no nccl.h and libnccl): "
                         "it runs data-parallel steps as a world of one only");
}
#endif

} // namespace
