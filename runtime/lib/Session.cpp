//===- Session.cpp - Running ahead-of-time compiled steps -----------------===//
//
// The buffers of a compiled step live on the device for the whole session;
// a step reads its arguments and writes its results (out-parameters), and
// every new state then swaps places with the argument it feeds. Device
// memory and copies go through the runtime's own mgpu* entry points, on a
// session stream that is synchronized before each step (which runs on a
// stream of its own and returns when that stream is done).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/AmpSession.h"
#include "amp/Runtime/MgpuWrappers.h"

#include "Error.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace amp::runtime;

namespace {

struct Buffer {
  std::string name;
  AmpBufferRole role;
  AmpBufferType type;
  std::vector<int64_t> shape;
  bool isArgument = false;
  int32_t feeds = -1;
  std::string init;
  void *device = nullptr;
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t numBytes() const { return numElements() * elementBytes(type); }
  static int64_t elementBytes(AmpBufferType type) {
    switch (type) {
    case AMP_BUFFER_F16:
    case AMP_BUFFER_BF16:
      return 2;
    case AMP_BUFFER_I1:
      return 1;
    case AMP_BUFFER_I64:
    case AMP_BUFFER_F64:
      return 8;
    default:
      return 4;
    }
  }
};

bool parseType(const std::string &text, AmpBufferType &type) {
  static const std::pair<const char *, AmpBufferType> types[] = {
      {"f32", AMP_BUFFER_F32},  {"f16", AMP_BUFFER_F16},
      {"bf16", AMP_BUFFER_BF16}, {"i32", AMP_BUFFER_I32},
      {"i1", AMP_BUFFER_I1},    {"i64", AMP_BUFFER_I64},
      {"f64", AMP_BUFFER_F64}};
  for (auto &[name, value] : types)
    if (text == name) {
      type = value;
      return true;
    }
  return false;
}

bool parseRole(const std::string &text, AmpBufferRole &role) {
  static const std::pair<const char *, AmpBufferRole> roles[] = {
      {"param", AMP_BUFFER_PARAM},       {"optstate", AMP_BUFFER_OPTIMIZER_STATE},
      {"data", AMP_BUFFER_DATA},         {"scaler", AMP_BUFFER_SCALER_STATE},
      {"loss", AMP_BUFFER_LOSS},         {"state", AMP_BUFFER_NEW_STATE},
      {"found_inf", AMP_BUFFER_FOUND_INF}, {"output", AMP_BUFFER_OUTPUT},
      {"buffer", AMP_BUFFER_FORWARD_STATE},
      {"hyper", AMP_BUFFER_HYPERPARAMETER}};
  for (auto &[name, value] : roles)
    if (text == name) {
      role = value;
      return true;
    }
  return false;
}

/// Parses one signature line; an error message otherwise.
std::string parseBuffer(const std::string &line, Buffer &buffer) {
  std::istringstream in(line);
  std::string kind, role, type, dims;
  if (!(in >> kind >> role >> buffer.name >> type >> dims) ||
      (kind != "arg" && kind != "result"))
    return "expected '<arg|result> <role> <name> <dtype> <dims>'";
  buffer.isArgument = kind == "arg";
  if (!parseRole(role, buffer.role))
    return "unknown role '" + role + "'";
  if (!parseType(type, buffer.type))
    return "unknown element type '" + type + "'";
  if (dims != "scalar") {
    std::istringstream dimsIn(dims);
    std::string dim;
    while (std::getline(dimsIn, dim, ','))
      buffer.shape.push_back(std::atoll(dim.c_str()));
  }
  std::string option;
  while (in >> option) {
    if (option.rfind("init=", 0) == 0)
      buffer.init = option.substr(5);
    else if (option.rfind("feeds=", 0) == 0)
      buffer.feeds = std::atoi(option.c_str() + 6);
    else
      return "unknown attribute '" + option + "'";
  }
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
};

namespace {

bool fail(const std::string &message) {
  return recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT, message);
}

/// The initial host contents of a state argument.
bool initialValue(const Buffer &buffer, Random &random,
                  std::vector<unsigned char> &bytes) {
  int64_t n = buffer.numElements();
  std::vector<double> values(n, 0.0);
  const std::string &init = buffer.init;
  if (init == "glorot") {
    int64_t fanOut = buffer.shape.empty() ? 1 : buffer.shape.back();
    int64_t fanIn = fanOut ? n / fanOut : 0;
    double limit = std::sqrt(6.0 / static_cast<double>(fanIn + fanOut));
    for (double &v : values)
      v = (2.0 * random.uniform() - 1.0) * limit;
  } else if (init == "ones") {
    values.assign(n, 1.0);
  } else if (!init.empty() && init != "zeros") {
    char *end = nullptr;
    double value = std::strtod(init.c_str(), &end);
    if (*end != '\0')
      return fail("amp session: buffer '" + buffer.name +
                  "' has an init the session cannot compute: '" + init +
                  "' (set it with ampSessionSetInput)");
    values.assign(n, value);
  }
  bytes.resize(buffer.numBytes());
  for (int64_t i = 0; i < n; ++i) {
    double v = values[i];
    switch (buffer.type) {
    case AMP_BUFFER_F32: {
      float f = static_cast<float>(v);
      std::memcpy(&bytes[i * 4], &f, 4);
      break;
    }
    case AMP_BUFFER_F64:
      std::memcpy(&bytes[i * 8], &v, 8);
      break;
    case AMP_BUFFER_I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(&bytes[i * 4], &x, 4);
      break;
    }
    case AMP_BUFFER_I64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(&bytes[i * 8], &x, 8);
      break;
    }
    case AMP_BUFFER_I1:
      bytes[i] = v != 0.0;
      break;
    default:
      return fail("amp session: buffer '" + buffer.name +
                  "': low-precision state is not initialized by the session");
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

} // namespace

AmpSession *ampSessionCreate(const AmpCompiledStep *step, uint64_t seed) {
  setEntryPoint("ampSessionCreate");
  if (!step || step->abiVersion != AMP_STEP_ABI_VERSION) {
    fail("amp session: the compiled step has ABI version " +
         std::to_string(step ? step->abiVersion : 0) + ", this runtime " +
         std::to_string(AMP_STEP_ABI_VERSION));
    return nullptr;
  }
  auto *session = new AmpSession;
  session->step = step;
  std::istringstream lines(step->signature);
  std::string line;
  int lineNumber = 0;
  while (std::getline(lines, line)) {
    ++lineNumber;
    if (line.empty())
      continue;
    Buffer buffer;
    std::string error = parseBuffer(line, buffer);
    if (!error.empty()) {
      fail("amp session: signature line " + std::to_string(lineNumber) +
           ": " + error + ": '" + line + "'");
      delete session;
      return nullptr;
    }
    if (buffer.role == AMP_BUFFER_LOSS)
      session->lossIndex = session->buffers.size();
    if (buffer.role == AMP_BUFFER_FOUND_INF)
      session->foundInfIndex = session->buffers.size();
    session->buffers.push_back(std::move(buffer));
  }
  session->stream = mgpuStreamCreate();
  Random random{seed};
  for (Buffer &buffer : session->buffers) {
    if (buffer.numBytes() > 0)
      buffer.device = mgpuMemAlloc(buffer.numBytes(), session->stream, false);
    if (hasPendingError())
      break;
    bool isState = buffer.role == AMP_BUFFER_PARAM ||
                   buffer.role == AMP_BUFFER_OPTIMIZER_STATE ||
                   buffer.role == AMP_BUFFER_FORWARD_STATE ||
                   buffer.role == AMP_BUFFER_HYPERPARAMETER ||
                   buffer.role == AMP_BUFFER_SCALER_STATE;
    std::vector<unsigned char> bytes;
    if (isState && (!initialValue(buffer, random, bytes) ||
                    !copyToDevice(session, buffer, bytes.data())))
      break;
  }
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
           buffer.feeds};
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

int32_t ampSessionSetInput(AmpSession *session, int32_t index,
                           const void *host, int64_t numBytes) {
  setEntryPoint("ampSessionSetInput");
  if (!checkIndex(session, index))
    return ampRuntimeGetLastError();
  Buffer &buffer = session->buffers[index];
  if (!buffer.isArgument || numBytes != buffer.numBytes()) {
    fail("amp session: '" + buffer.name + "' takes " +
         (buffer.isArgument ? std::to_string(buffer.numBytes()) + " bytes, got " +
                                  std::to_string(numBytes)
                            : std::string("no input: it is a result")));
    return ampRuntimeGetLastError();
  }
  copyToDevice(session, buffer, host);
  return ampRuntimeGetLastError();
}

int32_t ampSessionRead(AmpSession *session, int32_t index, void *host,
                       int64_t numBytes) {
  setEntryPoint("ampSessionRead");
  if (!checkIndex(session, index))
    return ampRuntimeGetLastError();
  Buffer &buffer = session->buffers[index];
  if (numBytes != buffer.numBytes()) {
    fail("amp session: '" + buffer.name + "' holds " +
         std::to_string(buffer.numBytes()) + " bytes, asked for " +
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
  // A descriptor per buffer: {allocated, aligned, offset, sizes, strides}.
  std::vector<std::vector<int64_t>> descriptors(session->buffers.size());
  std::vector<void *> pointers(session->buffers.size());
  for (int64_t s = 0; s < steps && !hasPendingError(); ++s) {
    for (size_t i = 0; i < session->buffers.size(); ++i) {
      const Buffer &buffer = session->buffers[i];
      size_t rank = buffer.shape.size();
      std::vector<int64_t> &d = descriptors[i];
      d.assign(3 + 2 * rank, 0);
      auto address = reinterpret_cast<int64_t>(buffer.device);
      d[0] = d[1] = address;
      int64_t stride = 1;
      for (size_t k = rank; k-- > 0;) {
        d[3 + k] = buffer.shape[k];
        d[3 + rank + k] = stride;
        stride *= buffer.shape[k];
      }
      pointers[i] = d.data();
    }
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
  unsigned char bytes[4] = {};
  if (ampSessionRead(session, session->lossIndex, bytes, buffer.numBytes()))
    return ampRuntimeGetLastError();
  uint16_t half;
  std::memcpy(&half, bytes, 2);
  if (buffer.type == AMP_BUFFER_F32)
    std::memcpy(loss, bytes, 4);
  else
    *loss = fromHalf(half, buffer.type == AMP_BUFFER_BF16);
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
