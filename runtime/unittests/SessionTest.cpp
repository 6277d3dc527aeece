//===- SessionTest.cpp - Sessions of compiled steps, on the fake driver ---===//
//
// A hand-written AmpCompiledStep stands in for an amp-compile object: its
// invoke computes on the buffers directly, which works because the fake
// driver's device memory is host memory. The tests check what a session does
// around a step: parsing the signature, allocating and initializing state,
// descriptors, swapping new state into the arguments, reading results, and
// the errors.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/AmpSession.h"

#include "gtest/gtest.h"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Descriptor of rank 0 or 1: {allocated, aligned, offset, sizes, strides}.
float *data(void *descriptor) {
  return reinterpret_cast<float **>(descriptor)[1];
}
int64_t size(void *descriptor) { return static_cast<int64_t *>(descriptor)[3]; }
int64_t stride(void *descriptor) {
  return static_cast<int64_t *>(descriptor)[4];
}

int invocations = 0;
bool descriptorsOk = true;

/// w' = w + x, loss = sum(w'), scale' = scale / 2, found_inf = false.
void invokeStep(void **d) {
  ++invocations;
  descriptorsOk &= size(d[0]) == 4 && stride(d[0]) == 1 && size(d[1]) == 4 &&
                   size(d[4]) == 4 && data(d[0]) != data(d[4]);
  float *w = data(d[0]), *x = data(d[1]), *loss = data(d[3]), *next = data(d[4]);
  *loss = 0;
  for (int i = 0; i < 4; ++i) {
    next[i] = w[i] + x[i];
    *loss += next[i];
  }
  *data(d[5]) = *data(d[2]) / 2;
  *reinterpret_cast<char *>(data(d[6])) = 0;
}

const char *kSignature = "arg param arg0 f32 4 init=ones\n"
                         "arg data arg1 f32 4\n"
                         "arg scaler scale f32 scalar init=6.553600e+04\n"
                         "result loss loss f32 scalar\n"
                         "result state result1 f32 4 feeds=0\n"
                         "result state result2 f32 scalar feeds=2\n"
                         "result found_inf found_inf i1 scalar\n";

class Session : public ::testing::Test {
protected:
  void SetUp() override {
    ampRuntimeClearError();
    ASSERT_EQ(ampRuntimeLoadDriver(AMP_FAKE_CUDA_DRIVER), AMP_RUNTIME_SUCCESS)
        << ampRuntimeGetLastErrorMessage();
    invocations = 0;
    descriptorsOk = true;
  }
  void TearDown() override { ampRuntimeClearError(); }

  AmpCompiledStep step{AMP_STEP_ABI_VERSION, kSignature, invokeStep};
};

TEST_F(Session, StateStaysAcrossStepsAndResultsAreReadOnDemand) {
  AmpSession *session = ampSessionCreate(&step, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  ASSERT_EQ(ampSessionNumBuffers(session), 7);

  float w[4], scale;
  ASSERT_EQ(ampSessionRead(session, 0, w, sizeof(w)), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(std::vector<float>(w, w + 4), std::vector<float>(4, 1.0f));
  int32_t scaleIndex = ampSessionFindBuffer(session, "scale");
  ASSERT_EQ(scaleIndex, 2);
  ASSERT_EQ(ampSessionRead(session, scaleIndex, &scale, 4), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(scale, 65536.0f);

  float x[4] = {1, 2, 3, 4};
  ASSERT_EQ(ampSessionSetInput(session, 1, x, sizeof(x)), AMP_RUNTIME_SUCCESS);
  ASSERT_EQ(ampSessionRun(session, 2), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(invocations, 2);
  EXPECT_TRUE(descriptorsOk);

  // Two steps of w += x from ones; the new state went back to the argument.
  ASSERT_EQ(ampSessionRead(session, 0, w, sizeof(w)), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(std::vector<float>(w, w + 4), (std::vector<float>{3, 5, 7, 9}));
  ASSERT_EQ(ampSessionRead(session, scaleIndex, &scale, 4), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(scale, 16384.0f);
  float loss = 0;
  int32_t foundInf = -1;
  ASSERT_EQ(ampSessionGetLoss(session, &loss), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(loss, 24.0f);
  ASSERT_EQ(ampSessionGetFoundInf(session, &foundInf), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(foundInf, 0);
  ampSessionDestroy(session);
}

TEST_F(Session, BufferInfoDescribesTheSignature) {
  AmpSession *session = ampSessionCreate(&step, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  AmpSessionBufferInfo info;
  ASSERT_EQ(ampSessionBufferInfo(session, 4, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_STREQ(info.name, "result1");
  EXPECT_EQ(info.role, AMP_BUFFER_NEW_STATE);
  EXPECT_EQ(info.type, AMP_BUFFER_F32);
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.numBytes, 16);
  EXPECT_EQ(info.isArgument, 0);
  EXPECT_EQ(info.feeds, 0);
  ASSERT_EQ(ampSessionBufferInfo(session, 6, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(info.type, AMP_BUFFER_I1);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(ampSessionFindBuffer(session, "nothing"), -1);
  ampSessionDestroy(session);
}

TEST_F(Session, BadCallsAreErrors) {
  AmpSession *session = ampSessionCreate(&step, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  float x[3] = {};
  EXPECT_EQ(ampSessionSetInput(session, 1, x, sizeof(x)),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: 'arg1' takes 16 bytes, got 12");
  ampRuntimeClearError();
  EXPECT_EQ(ampSessionSetInput(session, 3, x, 4),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: 'loss' takes no input: it is a result");
  ampRuntimeClearError();
  EXPECT_EQ(ampSessionRead(session, 9, x, 4), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(), "amp session: no buffer #9");
  ampSessionDestroy(session);
}

TEST_F(Session, BadSignaturesAreRejected) {
  AmpCompiledStep badRole{AMP_STEP_ABI_VERSION,
                          "arg param arg0 f32 4 init=ones\narg weight w f32 4\n",
                          invokeStep};
  EXPECT_EQ(ampSessionCreate(&badRole, 0), nullptr);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: signature line 2: unknown role 'weight': 'arg "
               "weight w f32 4'");
  ampRuntimeClearError();

  AmpCompiledStep badInit{AMP_STEP_ABI_VERSION,
                          "arg param arg0 f32 4 init=lecun\n", invokeStep};
  EXPECT_EQ(ampSessionCreate(&badInit, 0), nullptr);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: buffer 'arg0' has an init the session cannot "
               "compute: 'lecun' (set it with ampSessionSetInput)");
  ampRuntimeClearError();

  AmpCompiledStep newer{AMP_STEP_ABI_VERSION + 1, kSignature, invokeStep};
  EXPECT_EQ(ampSessionCreate(&newer, 0), nullptr);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: the compiled step has ABI version 2, this "
               "runtime 1");
}

TEST_F(Session, GlorotInitIsBoundedAndSeeded) {
  AmpCompiledStep glorot{AMP_STEP_ABI_VERSION,
                         "arg param arg0 f32 6,4 init=glorot\n", invokeStep};
  float first[24], second[24], again[24];
  for (auto [seed, out] : {std::pair<uint64_t, float *>{1, first},
                           {2, second}, {1, again}}) {
    AmpSession *session = ampSessionCreate(&glorot, seed);
    ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
    ASSERT_EQ(ampSessionRead(session, 0, out, 96), AMP_RUNTIME_SUCCESS);
    ampSessionDestroy(session);
  }
  float limit = std::sqrt(6.0f / (6 + 4));
  for (float v : first)
    EXPECT_LE(std::abs(v), limit);
  EXPECT_EQ(std::memcmp(first, again, 96), 0);
  EXPECT_NE(std::memcmp(first, second, 96), 0);
}

} // namespace
