//===- MpiWorld.h - The MPI job of a data-parallel run ----------*- C++ -*-===//
//
// A data-parallel step (`data-parallel=mpi`) runs in every process of an MPI
// job. The runners reach MPI only through the MPI runtime
// (libAmpMpiRuntime.so, amp/ExecutionEngine/MpiRuntime.h), loaded when such
// a step is compiled, so that everything else runs where MPI is not
// installed: MPI_Init happens then, MPI_Finalize at exit. A launcher is also
// recognized from the environment alone, to refuse a step compiled without
// the option in a job of several processes (each would train on its own).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_MPIWORLD_H
#define AMP_RUNNER_MPIWORLD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::amp {

/// The path of one of the project's runtime libraries (libAmpCpuRuntime.so,
/// libAmpMpiRuntime.so): beside libAmpCpuRuntime.so as this process loaded
/// it.
std::string getRuntimeLibraryPath(llvm::StringRef fileName);

/// The rank and size an MPI launcher gave this process, from its
/// environment, without initializing MPI (MPICH's and Intel MPI's PMI_RANK
/// and PMI_SIZE, Open MPI's OMPI_COMM_WORLD_RANK and _SIZE): rank 0 of 1
/// when none did.
struct LaunchedWorld {
  int rank = 0;
  int size = 1;
};
LaunchedWorld getLaunchedWorld();

class MpiWorld {
public:
  /// Loads the MPI runtime ($AMP_MPI_RUNTIME if set, else
  /// libAmpMpiRuntime.so beside the CPU runtime) and initializes MPI, once
  /// per process; later calls return the same world. The error names the
  /// library that did not load and why (MPICH missing, ...).
  static llvm::Expected<MpiWorld *> get();

  int getRank() const { return rank; }
  int getSize() const { return size; }
  /// The runtime, for the JIT to resolve the entry points of the steps (and
  /// MPI's own functions, which the runtime links).
  llvm::StringRef getRuntimePath() const { return runtimePath; }

  /// The sum over the ranks of one number per rank.
  double sum(double value) const;
  /// Every rank's `value`, in rank order.
  std::vector<uint64_t> gather(uint64_t value) const;
  /// Ends every process of the job with exit code `code`.
  [[noreturn]] void abort(int code) const;

private:
  MpiWorld() = default;

  int rank = 0, size = 1;
  std::string runtimePath;
  double (*sumFunction)(double) = nullptr;
  void (*gatherFunction)(uint64_t, uint64_t *) = nullptr;
  void (*abortFunction)(int32_t) = nullptr;
};

} // namespace mlir::amp

#endif // AMP_RUNNER_MPIWORLD_H
