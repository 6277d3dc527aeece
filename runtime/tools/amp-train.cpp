//===- amp-train.cpp - Train a compiled step on .npy data -----------------===//
//
// The driver of ahead-of-time compiled steps (amp-compile), with the CUDA
// toolkit only: loads a step built as a shared library, keeps its state on
// the device in a session, feeds it batches from .npy files in file order
// (as `amp-run --shuffle=false` does) and prints or logs the loss curve.
//
//   amp-train STEP.so --data x.npy,y.npy --steps N [--init DIR] [--log F.csv]
//             [--symbol NAME] [--seed S] [--time N]
//             [--batch-size N] [--keep-last-batch] [--nccl]
//
// A step whose batch dimension is dynamic needs --batch-size; batches are
// then that many samples, and --keep-last-batch runs the last partial batch
// of each pass over the data too (as amp-run's options of the same names).
// --init DIR loads DIR/<buffer name>.npy (f32) into the parameters and
// optimizer state found there (e.g. the arg<i>.npy of amp-run
// --save-params). --time N then times N more steps on the last batch
// without reading anything back, and prints the mean milliseconds per step.
// --nccl gives the runtime a one-rank NCCL communicator, so that the sums
// of a data-parallel step go through ncclAllReduce (without it they are
// copies: a world of one either way).
// Exit status: 0 on success, 1 on an error, 2 when there is no CUDA device.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/AmpSession.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Reads a C-order little-endian f32 .npy file; "" or an error message.
std::string readNpy(const std::string &path, Array &array) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return path + ": cannot open";
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return path + ": not a .npy file";
  uint32_t headerLength = 0;
  unsigned char length[4] = {};
  in.read(reinterpret_cast<char *>(length), magic[6] == 1 ? 2 : 4);
  headerLength = length[0] | length[1] << 8 | length[2] << 16 | length[3] << 24;
  std::string header(headerLength, ' ');
  in.read(header.data(), headerLength);
  if (header.find("'descr': '<f4'") == std::string::npos)
    return path + ": holds no little-endian f32 data (descr '<f4')";
  if (header.find("'fortran_order': False") == std::string::npos)
    return path + ": is in Fortran order";
  size_t open = header.find("'shape': ("), close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    return path + ": header has no shape";
  std::stringstream dims(header.substr(open + 10, close - open - 10));
  std::string dim;
  int64_t count = 1;
  while (std::getline(dims, dim, ','))
    if (dim.find_first_not_of(' ') != std::string::npos) {
      array.shape.push_back(std::atoll(dim.c_str()));
      count *= array.shape.back();
    }
  array.data.resize(count);
  if (!in.read(reinterpret_cast<char *>(array.data.data()), count * 4))
    return path + ": truncated data";
  return "";
}

int failWith(const std::string &message) {
  std::fprintf(stderr, "amp-train: %s\n", message.c_str());
  return 1;
}

int runtimeFailure(const char *what) {
  int32_t status = ampRuntimeGetLastError();
  std::fprintf(stderr, "amp-train: %s: %s\n", what,
               ampRuntimeGetLastErrorMessage());
  return status == AMP_RUNTIME_ERROR_NO_DEVICE ? 2 : 1;
}

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ','))
    parts.push_back(part);
  return parts;
}

} // namespace

int main(int argc, char **argv) {
  std::string library, symbol = "amp_compiled_step", initDir, logPath;
  std::vector<std::string> dataFiles;
  int64_t steps = 100, timedSteps = 0, batchOption = 0;
  bool keepLastBatch = false, nccl = false;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "amp-train: %s needs a value\n", arg.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (arg == "--data")
      dataFiles = splitCommas(value());
    else if (arg == "--steps")
      steps = std::atoll(value().c_str());
    else if (arg == "--init")
      initDir = value();
    else if (arg == "--log")
      logPath = value();
    else if (arg == "--symbol")
      symbol = value();
    else if (arg == "--seed")
      seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--time")
      timedSteps = std::atoll(value().c_str());
    else if (arg == "--batch-size")
      batchOption = std::atoll(value().c_str());
    else if (arg == "--keep-last-batch")
      keepLastBatch = true;
    else if (arg == "--nccl")
      nccl = true;
    else if (library.empty() && arg[0] != '-')
      library = arg;
    else
      return failWith("unknown argument '" + arg +
                      "'; usage: amp-train STEP.so --data x.npy,y.npy "
                      "--steps N [--init DIR] [--log F.csv] [--symbol NAME] "
                      "[--seed S] [--time N] [--batch-size N] "
                      "[--keep-last-batch] [--nccl]");
  }
  if (library.empty())
    return failWith("no compiled step given (a shared library from "
                    "amp-compile's object)");

  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return failWith(std::string("cannot load ") + library + ": " + dlerror());
  // On every return from here: the session goes, then the library, whose
  // destructors unload its kernels while the driver is certainly still
  // loaded, not in whatever order exit picks.
  struct Cleanup {
    void *handle;
    AmpSession *session = nullptr;
    ~Cleanup() {
      ampRuntimeDestroyCommunicator();
      ampSessionDestroy(session);
      dlclose(handle);
    }
  } cleanup{handle};
  auto *step =
      static_cast<const AmpCompiledStep *>(dlsym(handle, symbol.c_str()));
  if (!step)
    return failWith(library + " defines no '" + symbol + "'");

  AmpSession *session = cleanup.session = ampSessionCreate(step, seed);
  if (!session)
    return runtimeFailure("cannot create a session");
  if (nccl && ampRuntimeInitCommunicator(1, 0, nullptr) != AMP_RUNTIME_SUCCESS)
    return runtimeFailure("cannot create a one-rank NCCL communicator");

  // Arguments by role: the data ones are fed in order from --data.
  std::vector<int32_t> dataBuffers;
  for (int32_t i = 0; i < ampSessionNumBuffers(session); ++i) {
    AmpSessionBufferInfo info;
    ampSessionBufferInfo(session, i, &info);
    if (!info.isArgument)
      continue;
    if (info.role == AMP_BUFFER_DATA)
      dataBuffers.push_back(i);
    bool isState = info.role == AMP_BUFFER_PARAM ||
                   info.role == AMP_BUFFER_OPTIMIZER_STATE ||
                   info.role == AMP_BUFFER_FORWARD_STATE;
    std::string path = initDir + "/" + info.name + ".npy";
    if (initDir.empty() || !isState || !std::ifstream(path))
      continue;
    Array array;
    if (std::string error = readNpy(path, array); !error.empty())
      return failWith(error);
    if (info.type != AMP_ELEMENT_F32 ||
        static_cast<int64_t>(array.data.size() * 4) != info.numBytes)
      return failWith(path + " does not match buffer " + info.name);
    if (ampSessionSetInput(session, i, array.data.data(), info.numBytes))
      return runtimeFailure("cannot set the initial state");
  }
  if (dataFiles.size() != dataBuffers.size())
    return failWith("the step has " + std::to_string(dataBuffers.size()) +
                    " data argument(s); give as many files with --data");
  std::vector<Array> data(dataFiles.size());
  for (size_t k = 0; k < dataFiles.size(); ++k)
    if (std::string error = readNpy(dataFiles[k], data[k]); !error.empty())
      return failWith(error);

  // Batches of `batchSize` samples in file order (the last partial one
  // dropped, or with --keep-last-batch run at its own size).
  bool dynamicBatch = false;
  std::vector<int64_t> rowFloats(dataBuffers.size(), 1);
  for (size_t k = 0; k < dataBuffers.size(); ++k) {
    AmpSessionBufferInfo info;
    ampSessionBufferInfo(session, dataBuffers[k], &info);
    dynamicBatch |= info.dynamicBatch != 0;
    std::vector<int64_t> sample(info.shape + 1, info.shape + info.rank);
    for (int64_t d : sample)
      rowFloats[k] *= d;
    if (info.type != AMP_ELEMENT_F32 || data[k].shape.empty() ||
        std::vector<int64_t>(data[k].shape.begin() + 1, data[k].shape.end()) !=
            sample)
      return failWith(dataFiles[k] + " does not hold samples of " + info.name);
    if (data[k].shape[0] != data[0].shape[0])
      return failWith(dataFiles[k] + " holds " +
                      std::to_string(data[k].shape[0]) + " samples, " +
                      dataFiles[0] + " holds " +
                      std::to_string(data[0].shape[0]));
  }
  int64_t batchSize = ampSessionGetBatchSize(session);
  if (dynamicBatch) {
    if (batchOption <= 0)
      return failWith("the step's batch dimension is dynamic; give the batch "
                      "size with --batch-size N");
    batchSize = batchOption;
  } else {
    if (keepLastBatch)
      return failWith("--keep-last-batch needs a step whose batch dimension "
                      "is dynamic; this one takes batches of a fixed size");
    if (batchOption > 0 && batchOption != batchSize)
      return failWith("--batch-size " + std::to_string(batchOption) +
                      ": the step takes batches of " +
                      std::to_string(batchSize));
  }
  int64_t numSamples = data.empty() ? 0 : data[0].shape[0];
  if (!data.empty() && numSamples < batchSize && !keepLastBatch)
    return failWith(dataFiles[0] + " holds " + std::to_string(numSamples) +
                    " samples, fewer than one batch of " +
                    std::to_string(batchSize));
  int64_t batchesPerEpoch =
      data.empty()    ? 1
      : keepLastBatch ? (numSamples + batchSize - 1) / batchSize
                      : numSamples / batchSize;

  auto feed = [&](int64_t stepIndex) -> bool {
    if (data.empty())
      return true;
    int64_t first = (stepIndex % batchesPerEpoch) * batchSize;
    int64_t rows = std::min(batchSize, numSamples - first);
    if (dynamicBatch && rows != ampSessionGetBatchSize(session) &&
        ampSessionSetBatchSize(session, rows)) {
      runtimeFailure("cannot set the batch size");
      return false;
    }
    for (size_t k = 0; k < dataBuffers.size(); ++k)
      if (ampSessionSetInput(session, dataBuffers[k],
                             data[k].data.data() + first * rowFloats[k],
                             rows * rowFloats[k] * 4)) {
        runtimeFailure("cannot set a batch");
        return false;
      }
    return true;
  };

  std::FILE *log = logPath.empty() ? nullptr : std::fopen(logPath.c_str(), "w");
  if (!logPath.empty() && !log)
    return failWith("cannot write " + logPath);
  if (log)
    std::fprintf(log, "step,loss,found_inf,time_ms\n");
  float loss = 0;
  int32_t foundInf = 0;
  int64_t skipped = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (!feed(s))
      return 1;
    auto start = std::chrono::steady_clock::now();
    if (ampSessionRun(session, 1))
      return runtimeFailure("the step failed");
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (ampSessionGetLoss(session, &loss) ||
        ampSessionGetFoundInf(session, &foundInf))
      return runtimeFailure("cannot read the loss");
    skipped += foundInf;
    if (log)
      std::fprintf(log, "%lld,%.9g,%d,%.6f\n", static_cast<long long>(s + 1),
                   loss, foundInf, ms);
  }
  if (log)
    std::fclose(log);
  std::printf("amp-train: %lld steps, final loss %.6f, skipped %lld\n",
              static_cast<long long>(steps), loss,
              static_cast<long long>(skipped));
  if (timedSteps > 0) {
    auto start = std::chrono::steady_clock::now();
    if (ampSessionRun(session, timedSteps))
      return runtimeFailure("the step failed");
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::printf("amp-train: %.4f ms per step (%lld timed steps)\n",
                ms / timedSteps, static_cast<long long>(timedSteps));
  }
  return 0;
}
