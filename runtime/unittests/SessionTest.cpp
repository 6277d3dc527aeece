//===- SessionTest.cpp - Sessions of compiled steps, on the fake driver ---===//
//
// Hand-written AmpCompiledSteps stand in for amp-compile objects: their
// invoke computes on the buffers directly, which works because the fake
// driver's device memory is host memory. The tests check what a session does
// around a step: reading and checking the table, the ABI version,
// allocating and initializing state, descriptors (at the batch size of each
// call when it is dynamic), swapping new state into the arguments, reading
// results, and the errors.
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

/// Descriptor of any rank: {allocated, aligned, offset, sizes, strides}.
float *data(void *descriptor) {
  return reinterpret_cast<float **>(descriptor)[1];
}
int64_t size(void *descriptor, int k = 0) {
  return static_cast<int64_t *>(descriptor)[3 + k];
}
int64_t stride(void *descriptor, int rank, int k) {
  return static_cast<int64_t *>(descriptor)[3 + rank + k];
}

int invocations = 0;
bool descriptorsOk = true;

/// w' = w + x, loss = sum(w'), scale' = scale / 2, found_inf = false.
void invokeStep(void **d) {
  ++invocations;
  descriptorsOk &= size(d[0]) == 4 && stride(d[0], 1, 0) == 1 &&
                   size(d[1]) == 4 && size(d[4]) == 4 &&
                   data(d[0]) != data(d[4]);
  float *w = data(d[0]), *x = data(d[1]), *loss = data(d[3]), *next = data(d[4]);
  *loss = 0;
  for (int i = 0; i < 4; ++i) {
    next[i] = w[i] + x[i];
    *loss += next[i];
  }
  *data(d[5]) = *data(d[2]) / 2;
  *reinterpret_cast<char *>(data(d[6])) = 0;
}

const int64_t kVector[] = {4};

/// An entry of a step's table.
AmpStepBuffer buffer(const char *name, AmpBufferRole role, const int64_t *shape,
                     int32_t rank, AmpInitKind init = AMP_INIT_NONE,
                     double initValue = 0.0, int32_t feeds = -1,
                     AmpElementType type = AMP_ELEMENT_F32) {
  return AmpStepBuffer{name, shape, initValue, role, type, rank, feeds, init};
}

const AmpStepBuffer kBuffers[] = {
    buffer("arg0", AMP_BUFFER_PARAM, kVector, 1, AMP_INIT_ONES),
    buffer("arg1", AMP_BUFFER_DATA, kVector, 1),
    buffer("scale", AMP_BUFFER_SCALER_STATE, nullptr, 0, AMP_INIT_CONSTANT,
           65536.0),
    buffer("loss", AMP_BUFFER_LOSS, nullptr, 0),
    buffer("result1", AMP_BUFFER_NEW_STATE, kVector, 1, AMP_INIT_NONE, 0.0, 0),
    buffer("result2", AMP_BUFFER_NEW_STATE, nullptr, 0, AMP_INIT_NONE, 0.0, 2),
    buffer("found_inf", AMP_BUFFER_FOUND_INF, nullptr, 0, AMP_INIT_NONE, 0.0,
           -1, AMP_ELEMENT_I1),
};

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

  /// A step with `buffers` and the invoke of `kBuffers`.
  template <size_t N>
  static AmpCompiledStep makeStep(const AmpStepBuffer (&buffers)[N],
                                  void (*invoke)(void **) = invokeStep) {
    return AmpCompiledStep{AMP_STEP_ABI_VERSION, N, buffers, invoke};
  }

  AmpCompiledStep step = makeStep(kBuffers);
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

TEST_F(Session, BufferInfoDescribesTheTable) {
  AmpSession *session = ampSessionCreate(&step, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  AmpSessionBufferInfo info;
  ASSERT_EQ(ampSessionBufferInfo(session, 4, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_STREQ(info.name, "result1");
  EXPECT_EQ(info.role, AMP_BUFFER_NEW_STATE);
  EXPECT_EQ(info.type, AMP_ELEMENT_F32);
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.numBytes, 16);
  EXPECT_EQ(info.isArgument, 0);
  EXPECT_EQ(info.feeds, 0);
  EXPECT_EQ(info.dynamicBatch, 0);
  ASSERT_EQ(ampSessionBufferInfo(session, 6, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(info.type, AMP_ELEMENT_I1);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.numBytes, 1);
  ASSERT_EQ(ampSessionBufferInfo(session, 1, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(info.role, AMP_BUFFER_DATA);
  EXPECT_EQ(info.isArgument, 1);
  EXPECT_EQ(info.feeds, -1);
  EXPECT_EQ(ampSessionFindBuffer(session, "nothing"), -1);
  // A static step's batch size is dimension 0 of its data.
  EXPECT_EQ(ampSessionGetBatchSize(session), 4);
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
  ampRuntimeClearError();
  // A static step takes its own batch size only.
  EXPECT_EQ(ampSessionSetBatchSize(session, 4), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(ampSessionSetBatchSize(session, 3),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: the step takes batches of 4 (its shapes are "
               "static), got 3");
  // While an error is pending the runtime touches no device memory.
  ampRuntimeClearError();
  ampSessionDestroy(session);
}

TEST_F(Session, StepsOfAnotherAbiVersionAreRejected) {
  for (uint32_t version : {AMP_STEP_ABI_VERSION - 1, AMP_STEP_ABI_VERSION + 1}) {
    AmpCompiledStep other = step;
    other.abiVersion = version;
    EXPECT_EQ(ampSessionCreate(&other, 0), nullptr);
    EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(ampRuntimeGetLastErrorMessage()),
              "amp session: the compiled step has ABI version " +
                  std::to_string(version) + ", this runtime reads version " +
                  std::to_string(AMP_STEP_ABI_VERSION) +
                  " only: compile the step again with the amp-compile of "
                  "this runtime");
    ampRuntimeClearError();
  }
  EXPECT_EQ(ampSessionCreate(nullptr, 0), nullptr);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: no compiled step (NULL)");
}

/// The message of creating a session of a step with `buffers`.
template <size_t N>
std::string creationError(const AmpStepBuffer (&buffers)[N]) {
  AmpCompiledStep bad{AMP_STEP_ABI_VERSION, N, buffers, invokeStep};
  if (AmpSession *session = ampSessionCreate(&bad, 0)) {
    ampSessionDestroy(session);
    return "(created)";
  }
  std::string message = ampRuntimeGetLastErrorMessage();
  ampRuntimeClearError();
  return message;
}

TEST_F(Session, BadTablesAreRejected) {
  const int64_t batch[] = {AMP_STEP_DYNAMIC_DIM, 4};
  const int64_t innerDynamic[] = {4, AMP_STEP_DYNAMIC_DIM};
  const int64_t negative[] = {-2};

  AmpStepBuffer role[] = {buffer("w", AmpBufferRole(42), kVector, 1)};
  EXPECT_EQ(creationError(role), "amp session: buffer #0 ('w') of the "
                                 "compiled step has an unknown role 42");
  AmpStepBuffer type[] = {buffer("w", AMP_BUFFER_PARAM, kVector, 1,
                                 AMP_INIT_ZEROS, 0.0, -1, AmpElementType(9))};
  EXPECT_EQ(creationError(type), "amp session: buffer #0 ('w') of the "
                                 "compiled step has an unknown element type 9");
  AmpStepBuffer unnamed[] = {buffer(nullptr, AMP_BUFFER_PARAM, kVector, 1)};
  EXPECT_EQ(creationError(unnamed),
            "amp session: buffer #0 of the compiled step has no name");
  AmpStepBuffer noShape[] = {buffer("w", AMP_BUFFER_PARAM, nullptr, 2)};
  EXPECT_EQ(creationError(noShape), "amp session: buffer #0 ('w') of the "
                                    "compiled step has rank 2 but no shape");
  AmpStepBuffer sizes[] = {buffer("w", AMP_BUFFER_PARAM, negative, 1)};
  EXPECT_EQ(creationError(sizes), "amp session: buffer #0 ('w') of the "
                                  "compiled step has a negative size -2");
  AmpStepBuffer dynamicState[] = {buffer("w", AMP_BUFFER_PARAM, batch, 2)};
  AmpStepBuffer dynamicInner[] = {buffer("x", AMP_BUFFER_DATA, innerDynamic, 2)};
  for (std::string message :
       {creationError(dynamicState), creationError(dynamicInner)})
    EXPECT_NE(message.find("; only dimension 0 of data arguments and of "
                           "results other than new state may be the batch"),
              std::string::npos)
        << message;
  AmpStepBuffer init[] = {buffer("x", AMP_BUFFER_DATA, batch, 2, AMP_INIT_ONES)};
  EXPECT_EQ(creationError(init),
            "amp session: buffer #0 ('x') of the compiled step has an init "
            "kind, but only arguments of static shapes are initialized");
  AmpStepBuffer initKind[] = {
      buffer("w", AMP_BUFFER_PARAM, kVector, 1, AmpInitKind(17))};
  EXPECT_EQ(creationError(initKind), "amp session: buffer #0 ('w') of the "
                                     "compiled step has an unknown init kind 17");

  AmpStepBuffer feedsNothing[] = {
      buffer("w", AMP_BUFFER_PARAM, kVector, 1, AMP_INIT_ZEROS),
      buffer("result0", AMP_BUFFER_NEW_STATE, kVector, 1, AMP_INIT_NONE, 0.0, 5)};
  EXPECT_EQ(creationError(feedsNothing),
            "amp session: buffer #1 ('result0') of the compiled step feeds "
            "buffer #5, which the step does not have");
  AmpStepBuffer feedsData[] = {
      buffer("x", AMP_BUFFER_DATA, kVector, 1),
      buffer("result0", AMP_BUFFER_NEW_STATE, kVector, 1, AMP_INIT_NONE, 0.0, 0)};
  AmpStepBuffer feedsOtherShape[] = {
      buffer("s", AMP_BUFFER_SCALER_STATE, nullptr, 0, AMP_INIT_ONES),
      buffer("result0", AMP_BUFFER_NEW_STATE, kVector, 1, AMP_INIT_NONE, 0.0, 0)};
  for (std::string message :
       {creationError(feedsData), creationError(feedsOtherShape)})
    EXPECT_EQ(message, "amp session: buffer #1 ('result0') of the compiled "
                       "step feeds buffer #0, which is no state argument of "
                       "its type and shape");
  AmpStepBuffer outputFeeds[] = {
      buffer("w", AMP_BUFFER_PARAM, kVector, 1, AMP_INIT_ZEROS),
      buffer("result0", AMP_BUFFER_OUTPUT, kVector, 1, AMP_INIT_NONE, 0.0, 0)};
  EXPECT_EQ(creationError(outputFeeds),
            "amp session: buffer #1 ('result0') of the compiled step feeds "
            "an argument but is no new state");

  AmpCompiledStep noTable{AMP_STEP_ABI_VERSION, 3, nullptr, invokeStep};
  EXPECT_EQ(ampSessionCreate(&noTable, 0), nullptr);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: the compiled step has 3 buffers but no table");
}

TEST_F(Session, GlorotInitIsBoundedAndSeeded) {
  const int64_t shape[] = {6, 4};
  AmpStepBuffer buffers[] = {
      buffer("w", AMP_BUFFER_PARAM, shape, 2, AMP_INIT_GLOROT)};
  AmpCompiledStep glorot = makeStep(buffers);
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

TEST_F(Session, NormalAndConstantInitsTakeTheirValue) {
  const int64_t shape[] = {64, 64};
  AmpStepBuffer buffers[] = {
      buffer("w", AMP_BUFFER_PARAM, shape, 2, AMP_INIT_NORMAL, 0.02),
      buffer("lr", AMP_BUFFER_HYPERPARAMETER, nullptr, 0, AMP_INIT_CONSTANT,
             0.125),
      buffer("tracker", AMP_BUFFER_SCALER_STATE, nullptr, 0, AMP_INIT_CONSTANT,
             3.0, -1, AMP_ELEMENT_I32)};
  AmpCompiledStep normal = makeStep(buffers);
  AmpSession *session = ampSessionCreate(&normal, 7);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  std::vector<float> w(64 * 64);
  ASSERT_EQ(ampSessionRead(session, 0, w.data(), w.size() * 4),
            AMP_RUNTIME_SUCCESS);
  double sum = 0, squares = 0;
  for (float v : w) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  double mean = sum / w.size();
  double deviation = std::sqrt(squares / w.size() - mean * mean);
  // 4096 samples: the mean is within 3 standard errors (3 * 0.02 / 64).
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(deviation, 0.02, 1e-3);
  float lr = 0;
  int32_t tracker = 0;
  ASSERT_EQ(ampSessionRead(session, 1, &lr, 4), AMP_RUNTIME_SUCCESS);
  ASSERT_EQ(ampSessionRead(session, 2, &tracker, 4), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(lr, 0.125f);
  EXPECT_EQ(tracker, 3);
  ampSessionDestroy(session);
}

//===----------------------------------------------------------------------===//
// Dynamic batches
//===----------------------------------------------------------------------===//

/// What the dynamic step saw at its last call.
struct Seen {
  int64_t xSize = 0, xRowStride = 0, xColumnStride = 0, ySize = 0;
  float *x = nullptr, *y = nullptr;
} seen;

/// y[i] = sum_j x[i, j] * w[j]; loss = sum(y); w' = w + 1.
void invokeDynamic(void **d) {
  ++invocations;
  seen = {size(d[1], 0), stride(d[1], 2, 0), stride(d[1], 2, 1), size(d[3], 0),
          data(d[1]), data(d[3])};
  float *w = data(d[0]), *x = data(d[1]), *loss = data(d[2]), *y = data(d[3]),
        *next = data(d[4]);
  int64_t rows = size(d[1], 0), columns = size(d[1], 1);
  *loss = 0;
  for (int64_t i = 0; i < rows; ++i) {
    y[i] = 0;
    for (int64_t j = 0; j < columns; ++j)
      y[i] += x[i * columns + j] * w[j];
    *loss += y[i];
  }
  for (int64_t j = 0; j < columns; ++j)
    next[j] = w[j] + 1;
}

const int64_t kColumns[] = {3};
const int64_t kBatchRows[] = {AMP_STEP_DYNAMIC_DIM, 3};
const int64_t kBatch[] = {AMP_STEP_DYNAMIC_DIM};
const AmpStepBuffer kDynamicBuffers[] = {
    buffer("w", AMP_BUFFER_PARAM, kColumns, 1, AMP_INIT_ONES),
    buffer("x", AMP_BUFFER_DATA, kBatchRows, 2),
    buffer("loss", AMP_BUFFER_LOSS, nullptr, 0),
    buffer("result1", AMP_BUFFER_OUTPUT, kBatch, 1),
    buffer("result2", AMP_BUFFER_NEW_STATE, kColumns, 1, AMP_INIT_NONE, 0.0, 0),
};

class DynamicBatch : public Session {
protected:
  void SetUp() override {
    Session::SetUp();
    seen = {};
    driver = dlopen(AMP_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(driver, nullptr) << dlerror();
    calls = reinterpret_cast<int (*)(const char *)>(
        dlsym(driver, "fakeCudaCalls"));
    ASSERT_NE(calls, nullptr);
  }
  void TearDown() override {
    Session::TearDown();
    if (driver)
      dlclose(driver);
  }

  int allocations() const { return calls("cuMemAllocAsync"); }

  /// Sets the batch size and a batch of rows [r, r, r] for r = 1 ... n.
  void feed(AmpSession *session, int64_t n) {
    ASSERT_EQ(ampSessionSetBatchSize(session, n), AMP_RUNTIME_SUCCESS)
        << ampRuntimeGetLastErrorMessage();
    std::vector<float> x;
    for (int64_t r = 1; r <= n; ++r)
      x.insert(x.end(), 3, static_cast<float>(r));
    ASSERT_EQ(ampSessionSetInput(session, 1, x.data(), x.size() * 4),
              AMP_RUNTIME_SUCCESS)
        << ampRuntimeGetLastErrorMessage();
  }

  /// The output of the last step, at batch size n.
  std::vector<float> output(AmpSession *session, int64_t n) {
    std::vector<float> y(n);
    EXPECT_EQ(ampSessionRead(session, 3, y.data(), n * 4), AMP_RUNTIME_SUCCESS)
        << ampRuntimeGetLastErrorMessage();
    return y;
  }

  AmpCompiledStep dynamic = makeStep(kDynamicBuffers, invokeDynamic);
  void *driver = nullptr;
  int (*calls)(const char *) = nullptr;
};

TEST_F(DynamicBatch, SizesSetPerCallReachTheDescriptors) {
  int before = allocations();
  AmpSession *session = ampSessionCreate(&dynamic, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  // The three static buffers; x and result1 wait for a batch size.
  EXPECT_EQ(allocations() - before, 3);
  EXPECT_EQ(ampSessionGetBatchSize(session), 0);

  feed(session, 4);
  EXPECT_EQ(allocations() - before, 5);
  ASSERT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(seen.xSize, 4);
  EXPECT_EQ(seen.xRowStride, 3);
  EXPECT_EQ(seen.xColumnStride, 1);
  EXPECT_EQ(seen.ySize, 4);
  EXPECT_EQ(output(session, 4), (std::vector<float>{3, 6, 9, 12}));
  float *x = seen.x, *y = seen.y;

  // Smaller: the same device buffers, described at the new size; w is 2s.
  feed(session, 2);
  EXPECT_EQ(allocations() - before, 5);
  ASSERT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(seen.xSize, 2);
  EXPECT_EQ(seen.ySize, 2);
  EXPECT_EQ(seen.x, x);
  EXPECT_EQ(seen.y, y);
  EXPECT_EQ(output(session, 2), (std::vector<float>{6, 12}));
  float loss = 0;
  ASSERT_EQ(ampSessionGetLoss(session, &loss), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(loss, 18.0f);

  // Larger than any before: x and result1 are allocated again.
  feed(session, 6);
  EXPECT_EQ(allocations() - before, 7);
  ASSERT_EQ(ampSessionRun(session, 2), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(seen.xSize, 6);
  EXPECT_EQ(seen.ySize, 6);
  // Two steps, with w = 3s then 4s.
  EXPECT_EQ(output(session, 6), (std::vector<float>{12, 24, 36, 48, 60, 72}));
  EXPECT_EQ(invocations, 4);

  AmpSessionBufferInfo info;
  ASSERT_EQ(ampSessionBufferInfo(session, 1, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(info.dynamicBatch, 1);
  EXPECT_EQ(info.shape[0], 6);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.numBytes, 6 * 3 * 4);
  ASSERT_EQ(ampSessionBufferInfo(session, 0, &info), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(info.dynamicBatch, 0);
  ampSessionDestroy(session);
}

TEST_F(DynamicBatch, TheBatchSizeComesFirst) {
  AmpSession *session = ampSessionCreate(&dynamic, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  EXPECT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: the step has a dynamic batch dimension: set the "
               "batch size (ampSessionSetBatchSize) before ampSessionRun");
  ampRuntimeClearError();
  float x[3] = {};
  EXPECT_EQ(ampSessionSetInput(session, 1, x, sizeof(x)),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: 'x' has a dynamic batch dimension: set the batch "
               "size first (ampSessionSetBatchSize)");
  ampRuntimeClearError();
  EXPECT_EQ(ampSessionSetBatchSize(session, 0),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: the batch size must be at least 1, got 0");
  ampRuntimeClearError();
  EXPECT_EQ(invocations, 0);
  ampSessionDestroy(session);
}

TEST_F(DynamicBatch, ANewSizeNeedsNewData) {
  AmpSession *session = ampSessionCreate(&dynamic, 0);
  ASSERT_NE(session, nullptr) << ampRuntimeGetLastErrorMessage();
  feed(session, 4);
  ASSERT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_SUCCESS);
  // The same size again keeps the batch.
  ASSERT_EQ(ampSessionSetBatchSize(session, 4), AMP_RUNTIME_SUCCESS);
  ASSERT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_SUCCESS);
  ASSERT_EQ(ampSessionSetBatchSize(session, 3), AMP_RUNTIME_SUCCESS);
  EXPECT_EQ(ampSessionRun(session, 1), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: data argument 'x' holds no batch of the current "
               "size (3): set it (ampSessionSetInput) after "
               "ampSessionSetBatchSize");
  ampRuntimeClearError();
  float x[12] = {};
  EXPECT_EQ(ampSessionSetInput(session, 1, x, sizeof(x)),
            AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "amp session: 'x' takes 36 bytes at batch size 3, got 48");
  ampRuntimeClearError();
  EXPECT_EQ(invocations, 2);
  ampSessionDestroy(session);
}

} // namespace
