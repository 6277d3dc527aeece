//===- CompiledStep.h - A training step JIT-compiled for the CPU -*- C++ -*-===//
//
// The execution half of a runner, shared by amp-run and the Python
// bindings: a step (docs/TrainingStepIR.md) goes through the AMP pipeline
// (or runs in fp32 as written), amp-lower-to-llvm and MLIR's ExecutionEngine;
// one buffer per argument and result lives in host memory, and each call
// moves the carried state (parameters, optimizer and scaler state) from the
// results to the arguments of the next call, as the step signature model
// (StepSignature.h) says. Feeding batches and saving files is the caller's.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_COMPILEDSTEP_H
#define AMP_RUNNER_COMPILEDSTEP_H

#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Runner/MpiWorld.h"
#include "amp/Runner/Npy.h"
#include "amp/Step/StepSignature.h"
#include "amp/Pipelines/TransformStep.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::amp {

/// The DType of a tensor element type, if a runner exchanges it.
std::optional<DType> getDType(Type elementType);
/// "f32[4x3]" for dtype f32 and shape [4, 3].
std::string describeArray(DType dtype, llvm::ArrayRef<int64_t> shape);
/// "f32[?x3]" for dtype f32 and `type`, whose dynamic sizes print as "?".
std::string describeType(DType dtype, RankedTensorType type);

/// A deterministic generator (splitmix64), the same on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller).
  double normal();

private:
  uint64_t state;
};

/// The purposes a runner draws random numbers for, so that each is
/// reproducible from the user's seed alone.
enum class RandomStream : uint64_t { Init = 1, Shuffle = 2 };
/// The generator of one purpose and index (an argument, an epoch).
Random makeRandom(uint64_t seed, RandomStream stream, uint64_t index);

/// Fills carried state argument `index` as `init` says, drawing from
/// `seed`. Glorot (uniform) follows PyTorch's fans: dimension 0 is fan-out,
/// dimension 1 fan-in, the other dimensions the receptive field.
void initializeArray(HostArray &array, const Initializer &init, uint64_t seed,
                     unsigned index);

struct StepCompileOptions {
  /// The AMP pipeline's options; null runs the step in fp32 as written.
  const AmpPipelineOptions *amp = nullptr;
  /// The step function; empty: the only function with an `amp.update`.
  std::string function;
  /// Other functions of the module compiled along (e.g. "predict"), called
  /// with CompiledStep::call; each must exist.
  std::vector<std::string> extraFunctions;
  /// The CPU to compile for with its default features; empty: the host's.
  std::string cpu;
  /// Whether amp-lower-to-llvm vectorizes the cheap linalg ops (its
  /// `vectorize` option); both give the same results.
  bool vectorize = true;
  /// Whether matmuls and convolutions call oneDNN (amp-lower-to-llvm's
  /// `library` option); else they are loops, with the same results up to
  /// summation order.
  bool library = true;
  /// With `library`, whether the convolutions' images are laid out
  /// channels-last (amp-lower-to-llvm's `channels-last` option); the same
  /// bits up to the summation order of oneDNN's channels-last kernels, which
  /// read the images of more channels than one of its blocks (16 with
  /// AVX-512, 8 with AVX2: ampCpuChannelBlock).
  bool channelsLast = true;
  /// With `library`, whether the bf16 and f16 operands of the matmuls and
  /// convolutions that this host's runtime extends to f32 in each call
  /// (`ampCpuLowPrecisionPath`, `ampCpuConv2DLowPrecisionPath` say "f32") are
  /// stored in f32 where they are computed, rounded to their type
  /// (amp-lower-to-llvm's `f32-matmul-types` and `f32-convolution-types`):
  /// the same numbers multiplied, without the calls' conversions, with more
  /// memory.
  bool f32Operands = false;
  /// Threads of the library calls and of the compiled loops (1, the
  /// default, is deterministic; the library's results with more may differ
  /// in summation order, the loops' do not: amp-lower-to-llvm's `threads`).
  int threads = 1;
  /// Passes run on the transformed module before the CPU lowering, as a
  /// pass pipeline (e.g. "amp-gpu-tensor-rewrites"): runs the
  /// GPU lowering's tensor-level rewrites on the CPU, to check what they
  /// compute. Empty: none.
  std::string beforeLowering;
  /// Where the pipeline's report and explanations go, if wanted.
  PipelineOutputs *outputs = nullptr;
};

/// What one call of the step gave.
struct StepOutcome {
  /// The mean of the loss's elements.
  double loss;
  /// The loss scale the step used (dynamic scaling only).
  std::optional<double> scale;
  /// Whether the step found an inf/NaN gradient and was skipped.
  bool foundInf;
  double milliseconds;
  /// The bytes of temporaries the step allocated (with the CPU runtime's
  /// buffer pool, i.e. `library`; else unknown).
  std::optional<uint64_t> temporaryBytes;
};

class CompiledStep {
public:
  /// Transforms, lowers and JIT-compiles the step of `module` (which is
  /// rewritten in place; its context must outlive the CompiledStep). Errors
  /// in the IR are emitted as diagnostics on the module's context; the
  /// returned error says which stage failed. The state starts at
  /// initializeState(0). A data-parallel step loads the MPI runtime and
  /// initializes MPI (MpiWorld::get); any other step fails in a process
  /// that an MPI launcher started as one of several.
  static llvm::Expected<std::unique_ptr<CompiledStep>>
  compile(ModuleOp module, const StepCompileOptions &options);
  ~CompiledStep();

  /// The roles and types of the arguments, with the scaler state the
  /// pipeline appended.
  const StepSignature &getSignature() const { return signature; }
  llvm::StringRef getName() const { return signature.functionName; }
  /// The indices of the carried arguments (parameters, optimizer and scaler
  /// state).
  llvm::ArrayRef<unsigned> getCarriedArguments() const { return carried; }
  double getCompileSeconds() const { return compileSeconds; }
  /// The MPI job a data-parallel step runs in (data-parallel=mpi, which
  /// also initializes MPI); null for any other step.
  const MpiWorld *getWorld() const { return world; }

  /// The arguments of the next call: the carried state as the last call left
  /// it, and the data arguments as last set.
  llvm::MutableArrayRef<HostArray> getArguments() { return arguments; }
  llvm::ArrayRef<HostArray> getArguments() const { return arguments; }
  /// The results of the last call (carried results hold stale buffers).
  llvm::ArrayRef<HostArray> getResults() const { return results; }

  /// Sets the parameters, buffers and optimizer state from their
  /// initializers under `seed`, the scaler state to its start (the scale at
  /// `init-scale`, the growth tracker at 0, the overflows left at
  /// `hysteresis`) and the hyperparameters to their `amp.value`s.
  void initializeState(uint64_t seed);
  /// Replaces argument `index`; the error names the argument and both
  /// types when `array` does not have its dtype and shape (any number of
  /// rows for a data argument of a dynamic batch).
  llvm::Error setArgument(unsigned index, HostArray array);
  /// The error setArgument(index, array) would give, without setting it.
  llvm::Error checkArgument(unsigned index, const HostArray &array) const;
  /// The rows of the data arguments as set, which must agree in a step with
  /// a dynamic batch; 0 for a static step.
  llvm::Expected<int64_t> getBatchSize() const;
  /// Runs one step on the arguments and carries the state over. Fails when
  /// data arguments of a dynamic batch disagree on its size, or a
  /// hyperparameter has no value; and when a library call of the step
  /// failed (ampCpuTakeError), after which the carried state is undefined
  /// and every run fails until initializeState.
  llvm::Expected<StepOutcome> run();

  /// A hash of what every rank of a data-parallel run must hold the same:
  /// the parameters, the optimizer and scaler state, and whether the last
  /// step was skipped (not buffers, which stay per rank).
  uint64_t hashReplicatedState() const;
  /// Compares hashReplicatedState across the ranks of a data-parallel step
  /// (every rank must call it); the error names the ranks that differ from
  /// rank 0. Always succeeds for any other step.
  llvm::Error checkReplicas() const;

  /// The type of an extra function before lowering; null if `name` was not
  /// compiled along.
  FunctionType getFunctionType(llvm::StringRef name) const;
  /// Calls an extra function on `arrays` (its arguments, then buffers for
  /// its results), which must have its types.
  llvm::Error call(llvm::StringRef name, llvm::ArrayRef<HostArray *> arrays);

private:
  CompiledStep() = default;

  StepSignature signature;
  llvm::SmallVector<unsigned> carried;
  llvm::SmallVector<HostArray> arguments, results;
  /// The types of the results after the pipeline (as tensors).
  llvm::SmallVector<RankedTensorType> resultTypes;
  /// Whether each argument has a value: false for a hyperparameter without
  /// `amp.value` until it is set.
  llvm::SmallVector<bool> isSet;
  std::unique_ptr<ExecutionEngine> engine;
  void (*stepFunction)(void **) = nullptr;
  struct ExtraFunction {
    void (*function)(void **);
    FunctionType type;
  };
  llvm::StringMap<ExtraFunction> extraFunctions;
  const MpiWorld *world = nullptr;
  double initScale = 0.0;
  int64_t hysteresis = 1;
  double compileSeconds = 0.0;
  int threads = 1;
  bool library = true;
  /// Why a step failed in a library call; empty while the state is valid.
  std::string failure;
};

} // namespace mlir::amp

#endif // AMP_RUNNER_COMPILEDSTEP_H
