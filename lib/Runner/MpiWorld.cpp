//===- MpiWorld.cpp - The MPI job of a data-parallel run ------------------===//

#include "amp/Runner/MpiWorld.h"
#include "amp/ExecutionEngine/CpuRuntime.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include <cstdlib>
#include <dlfcn.h>
#include <memory>

using namespace mlir;
using namespace mlir::amp;

std::string amp::getRuntimeLibraryPath(llvm::StringRef fileName) {
  // The library as loaded, not by name: one loaded for a Python extension
  // (RTLD_LOCAL) is not among the symbols the JIT looks up in the process.
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&ampCpuSetNumThreads), &info) ||
      !info.dli_fname)
    return fileName.str();
  llvm::SmallString<256> path(llvm::sys::path::parent_path(info.dli_fname));
  llvm::sys::path::append(path, fileName);
  return std::string(path);
}

/// The integer in environment variable `name`, if it holds one.
static std::optional<int> getEnvironmentInt(const char *name) {
  const char *text = std::getenv(name);
  int value;
  if (!text || llvm::StringRef(text).getAsInteger(10, value))
    return std::nullopt;
  return value;
}

LaunchedWorld amp::getLaunchedWorld() {
  for (auto [rankName, sizeName] :
       {std::pair{"PMI_RANK", "PMI_SIZE"},
        std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}}) {
    std::optional<int> size = getEnvironmentInt(sizeName);
    if (size && *size > 0)
      return {getEnvironmentInt(rankName).value_or(0), *size};
  }
  return {};
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<MpiWorld *> MpiWorld::get() {
  static std::unique_ptr<MpiWorld> world;
  if (world)
    return world.get();
  const char *override = std::getenv("AMP_MPI_RUNTIME");
  std::string path =
      override ? override : getRuntimeLibraryPath("libAmpMpiRuntime.so");
  // Global: MPI's own plugins may look its symbols up in the process.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return makeError("cannot load the MPI runtime " + path + ": " +
                     dlerror() +
                     " (data-parallel steps need MPICH: apt-get install "
                     "mpich libmpich-dev, then rebuild amp-mlir)");
  auto lookup = [&](const char *name) { return dlsym(handle, name); };
  auto initialize =
      reinterpret_cast<void (*)(int32_t *, int32_t *)>(lookup("ampMpiInitialize"));
  std::unique_ptr<MpiWorld> loaded(new MpiWorld());
  loaded->runtimePath = path;
  loaded->sumFunction =
      reinterpret_cast<double (*)(double)>(lookup("ampMpiAllreduceSumF64"));
  loaded->gatherFunction = reinterpret_cast<void (*)(uint64_t, uint64_t *)>(
      lookup("ampMpiAllgatherU64"));
  loaded->abortFunction =
      reinterpret_cast<void (*)(int32_t)>(lookup("ampMpiAbort"));
  if (!initialize || !loaded->sumFunction || !loaded->gatherFunction ||
      !loaded->abortFunction)
    return makeError("the MPI runtime " + path +
                     " lacks the entry points of "
                     "amp/ExecutionEngine/MpiRuntime.h");
  int32_t rank = 0, size = 1;
  initialize(&rank, &size);
  loaded->rank = rank;
  loaded->size = size;
  world = std::move(loaded);
  return world.get();
}

double MpiWorld::sum(double value) const { return sumFunction(value); }

std::vector<uint64_t> MpiWorld::gather(uint64_t value) const {
  std::vector<uint64_t> values(size);
  gatherFunction(value, values.data());
  return values;
}

void MpiWorld::abort(int code) const {
  abortFunction(code);
  std::abort();
}
