//===- Session.cpp - Running ahead-of-time compiled steps -----------------===//
//
// The buffers of a compiled step live on the device for the whole session;
// a step reads its arguments and writes its results (out-parameters), and
// every new state then swaps places with the argument it feeds. The step's
// table (AmpStepABI.h) says what each buffer is; batch-sized buffers are
// allocated for the largest batch size set so far and described at the
// current one. Device memory and copies go through the runtime's own mgpu*
// entry points, on a session stream that is synchronized before each step
// (which runs on a stream of its own and returns when that stream is done).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/AmpSession.h"
#include "amp/Runtime/MgpuWrappers.h"

#include "Error.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace amp::runtime;

namespace {

bool isArgumentRole(int32_t role) {
  switch (role) {
  case AMP_BUFFER_PARAM:
  case AMP_BUFFER_OPTIMIZER_STATE:
  case AMP_BUFFER_DATA:
  case AMP_BUFFER_SCALER_STATE:
  case AMP_BUFFER_FORWARD_STATE:
  case AMP_BUFFER_HYPERPARAMETER:
    return true;
  default:
    return false;
  }
}

bool isKnownRole(int32_t role) {
  return isArgumentRole(role) || role == AMP_BUFFER_LOSS ||
         role == AMP_BUFFER_NEW_STATE || role == AMP_BUFFER_FOUND_INF ||
         role == AMP_BUFFER_OUTPUT;
}

/// The bytes of one element; 0 for an unknown type.
int64_t elementBytes(int32_t type) {
  switch (type) {
  case AMP_ELEMENT_F16:
  case AMP_ELEMENT_BF16:
    return 2;
  case AMP_ELEMENT_I1:
    return 1;
  case AMP_ELEMENT_F32:
  case AMP_ELEMENT_I32:
    return 4;
  case AMP_ELEMENT_I64:
  case AMP_ELEMENT_F64:
    return 8;
  default:
    return 0;
  }
}

struct Buffer {
  std::string name;
  AmpBufferRole role;
  AmpElementType type;
  /// At the current batch size (0 in a dynamic dimension until one is set).
  std::vector<int64_t> shape;
  /// Whether dimension 0 is the batch size.
  bool dynamic = false;
  bool isArgument = false;
  int32_t feeds = -1;
  AmpInitKind init = AMP_INIT_NONE;
  double initValue = 0.0;
  void *device = nullptr;
  /// A batch-sized data argument not set since the batch size changed.
  bool stale = false;
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t numBytes() const { return numElements() * elementBytes(type); }
};

/// Reads entry `index` of the step's table into `buffer`; a description of
/// what is wrong with it otherwise.
std::string readBuffer(const AmpCompiledStep &step, uint32_t index,
                       Buffer &buffer) {
  const AmpStepBuffer &entry = step.buffers[index];
  if (!entry.name)
    return "has no name";
  buffer.name = entry.name;
  if (!isKnownRole(entry.role))
    return "has an unknown role " + std::to_string(entry.role);
  buffer.role = static_cast<AmpBufferRole>(entry.role);
  buffer.isArgument = isArgumentRole(entry.role);
  if (!elementBytes(entry.elementType))
    return "has an unknown element type " + std::to_string(entry.elementType);
  buffer.type = static_cast<AmpElementType>(entry.elementType);
  if (entry.rank < 0 || (entry.rank > 0 && !entry.shape))
    return "has rank " + std::to_string(entry.rank) + " but no shape";
  for (int32_t k = 0; k < entry.rank; ++k) {
    int64_t size = entry.shape[k];
    if (size == AMP_STEP_DYNAMIC_DIM) {
      bool batchSized = buffer.role == AMP_BUFFER_DATA ||
                        (!buffer.isArgument && buffer.role != AMP_BUFFER_NEW_STATE);
      if (k != 0 || !batchSized)
        return "has a dynamic dimension " + std::to_string(k) +
               "; only dimension 0 of data arguments and of results other "
               "than new state may be the batch";
      buffer.dynamic = true;
      size = 0;
    } else if (size < 0) {
      return "has a negative size " + std::to_string(size);
    }
    buffer.shape.push_back(size);
  }
  if (entry.initKind < AMP_INIT_NONE || entry.initKind > AMP_INIT_CONSTANT)
    return "has an unknown init kind " + std::to_string(entry.initKind);
  buffer.init = static_cast<AmpInitKind>(entry.initKind);
  buffer.initValue = entry.initValue;
  if (buffer.init != AMP_INIT_NONE && (!buffer.isArgument || buffer.dynamic))
    return "has an init kind, but only arguments of static shapes are "
           "initialized";
  buffer.feeds = entry.feeds;
  if (buffer.role != AMP_BUFFER_NEW_STATE)
    return buffer.feeds == -1 ? "" : "feeds an argument but is no new state";
  if (buffer.feeds < 0 || static_cast<uint32_t>(buffer.feeds) >= step.numBuffers)
    return "feeds buffer #" + std::to_string(buffer.feeds) +
           ", which the step does not have";
  const AmpStepBuffer &fed = step.buffers[buffer.feeds];
  if (!isArgumentRole(fed.role) || fed.role == AMP_BUFFER_DATA ||
      fed.elementType != entry.elementType || fed.rank != entry.rank ||
      (entry.rank && (!fed.shape || std::memcmp(fed.shape, entry.shape,
                                                entry.rank * sizeof(int64_t)))))
    return "feeds buffer #" + std::to_string(buffer.feeds) +
           ", which is no state argument of its type and shape";
  return "";
}

/// The f32 value of f16 or bf16 bits.
float fromHalf(uint16_t h, bool bf16) {
  uint32_t bits;
  if (bf16) {
    bits = static_cast<uint32_t>(h) << 16;
  } else {
    uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
             mantissa = h & 0x3ff;
    if (exponent == 0x1f)
      bits = sign | 0x7f800000u | (mantissa << 13);
    else if (exponent != 0)
      bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    else if (mantissa == 0)
      bits = sign;
    else {
      float value = std::ldexp(static_cast<float>(mantissa), -24);
      return sign ? -value : value;
    }
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// SplitMix64: the session's own generator for initial parameters.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
};


} // namespace

struct AmpSession {
  const AmpCompiledStep *step = nullptr;
  std::vector<Buffer> buffers;
  CUstream stream = nullptr;
  int32_t lossIndex = -1, foundInfIndex = -1;
  /// Whether some buffer is batch-sized (dimension 0 dynamic).
  bool dynamicBatch = false;
  /// The static batch size, or the last one set (0: none yet).
  int64_t batchSize = 0;
  /// The batch size the batch-sized device buffers were allocated for.
  int64_t capacity = 0;
};

namespace {

bool fail(const std::string &message) {
  return recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT, message);
}

/// The initial host contents of an argument with an init kind.
bool initialValue(const Buffer &buffer, Random &random,
                  std::vector<unsigned char> &bytes) {
  int64_t n = buffer.numElements();
  std::vector<double> values(n, 0.0);
  switch (buffer.init) {
  case AMP_INIT_NONE:
  case AMP_INIT_ZEROS:
    break;
  case AMP_INIT_ONES:
    values.assign(n, 1.0);
    break;
  case AMP_INIT_CONSTANT:
    values.assign(n, buffer.initValue);
    break;
  case AMP_INIT_GLOROT: {
    int64_t fanOut = buffer.shape.empty() ? 1 : buffer.shape.back();
    int64_t fanIn = fanOut ? n / fanOut : 0;
    double limit = std::sqrt(6.0 / static_cast<double>(fanIn + fanOut));
    for (double &v : values)
      v = (2.0 * random.uniform() - 1.0) * limit;
    break;
  }
  case AMP_INIT_NORMAL:
    // Box-Muller; 1 - u is in (0, 1], so the logarithm is finite.
    for (double &v : values) {
      double radius = std::sqrt(-2.0 * std::log(1.0 - random.uniform()));
      v = buffer.initValue * radius * std::cos(2.0 * M_PI * random.uniform());
    }
    break;
  }
  bytes.resize(buffer.numBytes());
  for (int64_t i = 0; i < n; ++i) {
    double v = values[i];
    switch (buffer.type) {
    case AMP_ELEMENT_F32: {
      float f = static_cast<float>(v);
      std::memcpy(&bytes[i * 4], &f, 4);
      break;
    }
    case AMP_ELEMENT_F64:
      std::memcpy(&bytes[i * 8], &v, 8);
      break;
    case AMP_ELEMENT_I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(&bytes[i * 4], &x, 4);
      break;
    }
    case AMP_ELEMENT_I64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(&bytes[i * 8], &x, 8);
      break;
    }
    case AMP_ELEMENT_I1:
      bytes[i] = v != 0.0;
      break;
    default:
      return fail("amp session: buffer '" + buffer.name +
                  "': low-precision state is not initialized by the session "
                  "(set it with ampSessionSetInput)");
    }
  }
  return true;
}

bool copyToDevice(AmpSession *session, Buffer &buffer, const void *host) {
  mgpuMemcpy(buffer.device, const_cast<void *>(host), buffer.numBytes(),
             session->stream);
  mgpuStreamSynchronize(session->stream);
  return !hasPendingError();
}

bool checkIndex(const AmpSession *session, int32_t index) {
  if (!session || index < 0 ||
      index >= static_cast<int32_t>(session->buffers.size()))
    return fail("amp session: no buffer #" + std::to_string(index));
  return true;
}

/// A batch-sized buffer cannot be used before the batch size is known.
bool checkBatchSizeSet(const AmpSession *session, const Buffer &buffer) {
  if (!buffer.dynamic || session->batchSize > 0)
    return true;
  return fail("amp session: '" + buffer.name +
              "' has a dynamic batch dimension: set the batch size first "
              "(ampSessionSetBatchSize)");
}

/// " at batch size N" for batch-sized buffers.
std::string atBatchSize(const AmpSession *session, const Buffer &buffer) {
  return buffer.dynamic
             ? " at batch size " + std::to_string(session->batchSize)
             : std::string();
}

} // namespace

AmpSession *ampSessionCreate(const AmpCompiledStep *step, uint64_t seed) {
  setEntryPoint("ampSessionCreate");
  if (!step) {
    fail("amp session: no compiled step (NULL)");
    return nullptr;
  }
  if (step->abiVersion != AMP_STEP_ABI_VERSION) {
    fail("amp session: the compiled step has ABI version " +
         std::to_string(step->abiVersion) + ", this runtime reads version " +
         std::to_string(AMP_STEP_ABI_VERSION) +
         " only: compile the step again with the amp-compile of this runtime");
    return nullptr;
  }
  if (step->numBuffers > 0 && !step->buffers) {
    fail("amp session: the compiled step has " +
         std::to_string(step->numBuffers) + " buffers but no table");
    return nullptr;
  }
  auto *session = new AmpSession;
  session->step = step;
  for (uint32_t i = 0; i < step->numBuffers; ++i) {
    Buffer buffer;
    if (std::string error = readBuffer(*step, i, buffer); !error.empty()) {
      fail("amp session: buffer #" + std::to_string(i) +
           (buffer.name.empty() ? "" : " ('" + buffer.name + "')") +
           " of the compiled step " + error);
      delete session;
      return nullptr;
    }
    if (buffer.role == AMP_BUFFER_LOSS)
      session->lossIndex = session->buffers.size();
    if (buffer.role == AMP_BUFFER_FOUND_INF)
      session->foundInfIndex = session->buffers.size();
    session->dynamicBatch |= buffer.dynamic;
    session->buffers.push_back(std::move(buffer));
  }
  if (!session->dynamicBatch)
    for (const Buffer &buffer : session->buffers)
      if (buffer.role == AMP_BUFFER_DATA && !buffer.shape.empty()) {
        session->batchSize = buffer.shape[0];
        break;
      }
  session->stream = mgpuStreamCreate();
  Random random{seed};
  for (Buffer &buffer : session->buffers) {
    if (buffer.dynamic)
      continue;
    if (buffer.numBytes() > 0)
      buffer.device = mgpuMemAlloc(buffer.numBytes(), session->stream, false);
    if (hasPendingError())
      break;
    std::vector<unsigned char> bytes;
    if (buffer.init != AMP_INIT_NONE &&
        (!initialValue(buffer, random, bytes) ||
         !copyToDevice(session, buffer, bytes.data())))
      break;
  }
  // The step runs on a stream of its own: its buffers must exist by then.
  mgpuStreamSynchronize(session->stream);
  if (hasPendingError()) {
    ampSessionDestroy(session);
    return nullptr;
  }
  return session;
}

void ampSessionDestroy(AmpSession *session) {
  if (!session)
    return;
  for (Buffer &buffer : session->buffers)
    if (buffer.device)
      mgpuMemFree(buffer.device, session->stream);
  if (session->stream)
    mgpuStreamDestroy(session->stream);
  delete session;
}

int32_t ampSessionNumBuffers(const AmpSession *session) {
  return session ? static_cast<int32_t>(session->buffers.size()) : 0;
}

int32_t ampSessionBufferInfo(const AmpSession *session, int32_t index,
                             AmpSessionBufferInfo *info) {
  setEntryPoint("ampSessionBufferInfo");
  if (!checkIndex(session, index) || !info)
    return ampRuntimeGetLastError();
  const Buffer &buffer = session->buffers[index];
  *info = {buffer.name.c_str(),
           buffer.role,
           buffer.type,
           static_cast<int32_t>(buffer.shape.size()),
           buffer.shape.data(),
           buffer.numBytes(),
           buffer.isArgument,
           buffer.feeds,
           buffer.dynamic};
  return AMP_RUNTIME_SUCCESS;
}

int32_t ampSessionFindBuffer(const AmpSession *session, const char *name) {
  if (!session || !name)
    return -1;
  for (size_t i = 0; i < session->buffers.size(); ++i)
    if (session->buffers[i].name == name)
      return static_cast<int32_t>(i);
  return -1;
}

int32_t ampSessionSetBatchSize(AmpSession *session, int64_t batchSize) {
  setEntryPoint("ampSessionSetBatchSize");
  if (hasPendingError())
    return ampRuntimeGetLastError();
  if (!session) {
    fail("amp session: no session (NULL)");
    return ampRuntimeGetLastError();
  }
  if (batchSize < 1) {
    fail("amp session: the batch size must be at least 1, got " +
         std::to_string(batchSize));
    return ampRuntimeGetLastError();
  }
  if (!session->dynamicBatch) {
    if (batchSize != session->batchSize)
      fail(session->batchSize
               ? "amp session: the step takes batches of " +
                     std::to_string(session->batchSize) +
                     " (its shapes are static), got " +
                     std::to_string(batchSize)
               : std::string("amp session: the step has no data arguments, "
                             "hence no batch size"));
    return ampRuntimeGetLastError();
  }
  if (batchSize > session->capacity) {
    for (Buffer &buffer : session->buffers) {
      if (!buffer.dynamic)
        continue;
      if (buffer.device)
        mgpuMemFree(buffer.device, session->stream);
      buffer.shape[0] = batchSize;
      buffer.device = buffer.numBytes() > 0
                          ? mgpuMemAlloc(buffer.numBytes(), session->stream,
                                         false)
                          : nullptr;
    }
    mgpuStreamSynchronize(session->stream);
    if (hasPendingError())
      return ampRuntimeGetLastError();
    session->capacity = batchSize;
  }
  if (batchSize != session->batchSize)
    for (Buffer &buffer : session->buffers)
      if (buffer.dynamic) {
        buffer.shape[0] = batchSize;
        buffer.stale = buffer.isArgument;
      }
  session->batchSize = batchSize;
  return AMP_RUNTIME_SUCCESS;
}

int64_t ampSessionGetBatchSize(const AmpSession *session) {
  return session ? session->batchSize : 0;
}

int32_t ampSessionSetInput(AmpSession *session, int32_t index,
                           const void *host, int64_t numBytes) {
  setEntryPoint("ampSessionSetInput");
  if (!checkIndex(session, index))
    return ampRuntimeGetLastError();
  Buffer &buffer = session->buffers[index];
  if (!buffer.isArgument) {
    fail("amp session: '" + buffer.name + "' takes no input: it is a result");
    return ampRuntimeGetLastError();
  }
  if (!checkBatchSizeSet(session, buffer))
    return ampRuntimeGetLastError();
  if (numBytes != buffer.numBytes()) {
    fail("amp session: '" + buffer.name + "' takes " +
         std::to_string(buffer.numBytes()) + " bytes" +
         atBatchSize(session, buffer) + ", got " + std::to_string(numBytes));
    return ampRuntimeGetLastError();
  }
  if (copyToDevice(session, buffer, host))
    buffer.stale = false;
  return ampRuntimeGetLastError();
}

int32_t ampSessionRead(AmpSession *session, int32_t index, void *host,
                       int64_t numBytes) {
  setEntryPoint("ampSessionRead");
  if (!checkIndex(session, index))
    return ampRuntimeGetLastError();
  Buffer &buffer = session->buffers[index];
  if (!checkBatchSizeSet(session, buffer))
    return ampRuntimeGetLastError();
  if (numBytes != buffer.numBytes()) {
    fail("amp session: '" + buffer.name + "' holds " +
         std::to_string(buffer.numBytes()) + " bytes" +
         atBatchSize(session, buffer) + ", asked for " +
         std::to_string(numBytes));
    return ampRuntimeGetLastError();
  }
  mgpuMemcpy(host, buffer.device, numBytes, session->stream);
  mgpuStreamSynchronize(session->stream);
  return ampRuntimeGetLastError();
}

int32_t ampSessionRun(AmpSession *session, int64_t steps) {
  if (!session)
    return AMP_RUNTIME_ERROR_INVALID_ARGUMENT;
  setEntryPoint("ampSessionRun");
  if (session->dynamicBatch && session->batchSize == 0) {
    fail("amp session: the step has a dynamic batch dimension: set the "
         "batch size (ampSessionSetBatchSize) before ampSessionRun");
    return ampRuntimeGetLastError();
  }
  for (const Buffer &buffer : session->buffers)
    if (buffer.stale) {
      fail("amp session: data argument '" + buffer.name +
           "' holds no batch of the current size (" +
           std::to_string(session->batchSize) +
           "): set it (ampSessionSetInput) after ampSessionSetBatchSize");
      return ampRuntimeGetLastError();
    }
  // A descriptor per buffer: {allocated, aligned, offset, sizes, strides},
  // at the current batch size; only the addresses change between steps.
  std::vector<std::vector<int64_t>> descriptors(session->buffers.size());
  std::vector<void *> pointers(session->buffers.size());
  for (size_t i = 0; i < session->buffers.size(); ++i) {
    const Buffer &buffer = session->buffers[i];
    size_t rank = buffer.shape.size();
    std::vector<int64_t> &d = descriptors[i];
    d.assign(3 + 2 * rank, 0);
    int64_t stride = 1;
    for (size_t k = rank; k-- > 0;) {
      d[3 + k] = buffer.shape[k];
      d[3 + rank + k] = stride;
      stride *= buffer.shape[k];
    }
    pointers[i] = d.data();
  }
  for (int64_t s = 0; s < steps && !hasPendingError(); ++s) {
    for (size_t i = 0; i < session->buffers.size(); ++i)
      descriptors[i][0] = descriptors[i][1] =
          reinterpret_cast<int64_t>(session->buffers[i].device);
    session->step->invoke(pointers.data());
    if (hasPendingError())
      break;
    for (Buffer &buffer : session->buffers)
      if (buffer.feeds >= 0)
        std::swap(buffer.device, session->buffers[buffer.feeds].device);
  }
  return ampRuntimeGetLastError();
}

int32_t ampSessionGetLoss(AmpSession *session, float *loss) {
  setEntryPoint("ampSessionGetLoss");
  if (!session || session->lossIndex < 0 || !loss) {
    fail("amp session: the step has no loss");
    return ampRuntimeGetLastError();
  }
  const Buffer &buffer = session->buffers[session->lossIndex];
  if (buffer.dynamic || buffer.numElements() != 1 ||
      (buffer.type != AMP_ELEMENT_F32 && buffer.type != AMP_ELEMENT_F16 &&
       buffer.type != AMP_ELEMENT_BF16)) {
    fail("amp session: the loss '" + buffer.name +
         "' is not one f32, f16 or bf16 value; read it with ampSessionRead");
    return ampRuntimeGetLastError();
  }
  unsigned char bytes[4] = {};
  if (ampSessionRead(session, session->lossIndex, bytes, buffer.numBytes()))
    return ampRuntimeGetLastError();
  uint16_t half;
  std::memcpy(&half, bytes, 2);
  if (buffer.type == AMP_ELEMENT_F32)
    std::memcpy(loss, bytes, 4);
  else
    *loss = fromHalf(half, buffer.type == AMP_ELEMENT_BF16);
  return AMP_RUNTIME_SUCCESS;
}

int32_t ampSessionGetFoundInf(AmpSession *session, int32_t *foundInf) {
  if (!session || !foundInf)
    return AMP_RUNTIME_ERROR_INVALID_ARGUMENT;
  *foundInf = 0;
  if (session->foundInfIndex < 0)
    return AMP_RUNTIME_SUCCESS;
  unsigned char byte = 0;
  int32_t status = ampSessionRead(session, session->foundInfIndex, &byte, 1);
  *foundInf = byte != 0;
  return status;
}
