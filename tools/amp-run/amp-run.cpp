//===- amp-run.cpp - Train a compiled training step on the CPU ------------===//
//
// Reads a training step (docs/TrainingStepIR.md), applies the AMP pipeline
// (or, without AMP options, runs the step in fp32 as written), lowers it with
// amp-lower-to-llvm, JIT-compiles it and calls it once per step: parameters,
// optimizer state and scaler state go from the results of one step to the
// arguments of the next, batches come from .npy files. Everything it needs
// to know about the step is read from the IR (amp/Runner/StepSignature.h).
// docs/Running.md is the user's reference.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Pipelines/CPULowering.h"
#include "amp/Runner/Npy.h"
#include "amp/Runner/StepSignature.h"
#include "amp/Transforms/Passes.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;

namespace cl = llvm::cl;

static cl::OptionCategory runCategory("amp-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<step.mlir>"),
                                      cl::cat(runCategory));
static cl::opt<std::string>
    ampOptions("amp",
               cl::desc("AMP pipeline options, as for amp-pipeline (e.g. "
                        "\"dtype=f16 scaling=dynamic\"); none: fp32"),
               cl::init(""), cl::cat(runCategory));
static cl::opt<std::string> funcName(
    "func", cl::desc("The step function (default: the only one with an "
                     "amp.update)"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of parameter initialization and shuffling"),
         cl::init(0), cl::cat(runCategory));
static cl::list<std::string>
    dataFiles("data", cl::CommaSeparated,
              cl::desc("One .npy file per data argument, in argument order"),
              cl::cat(runCategory));
static cl::opt<int64_t> numSteps("steps", cl::desc("Steps to run"),
                                 cl::init(-1), cl::cat(runCategory));
static cl::opt<int64_t>
    numEpochs("epochs", cl::desc("Epochs to run (default: 1 if no --steps)"),
              cl::init(-1), cl::cat(runCategory));
static cl::opt<bool> shuffle("shuffle",
                             cl::desc("Shuffle the samples every epoch"),
                             cl::init(true), cl::cat(runCategory));
static cl::opt<std::string>
    loadParams("load-params",
               cl::desc("Directory of arg<i>.npy files to start the "
                        "parameters from"),
               cl::init(""), cl::cat(runCategory));
static cl::opt<std::string>
    saveParams("save-params",
               cl::desc("Directory to write the final parameters to"),
               cl::init(""), cl::cat(runCategory));
static cl::opt<std::string> loadState(
    "load-state",
    cl::desc("Directory written by --save-state to resume training from"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<std::string> saveState(
    "save-state",
    cl::desc("Directory to write the training state to (parameters, "
             "optimizer and scaler state, step)"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<std::string>
    logFile("log", cl::desc("Per-step log, CSV or JSON by its extension"),
            cl::init(""), cl::cat(runCategory));
static cl::list<std::string>
    evalFiles("eval", cl::CommaSeparated,
              cl::desc("Inputs and labels (.npy) to measure accuracy on "
                       "after training, with --eval-func"),
              cl::cat(runCategory));
static cl::opt<std::string> evalFunc(
    "eval-func",
    cl::desc("Forward function for --eval: takes the parameters of the step "
             "in argument order, then an input batch; returns logits"),
    cl::init("predict"), cl::cat(runCategory));
static cl::opt<int64_t> injectAtStep(
    "inject-nonfinite-at-step",
    cl::desc("Replace the first element of the first float data argument "
             "by a non-finite value at this step (1-based), to test overflow "
             "handling"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    injectValue("inject-value", cl::desc("The injected value: nan or inf"),
                cl::init("nan"), cl::cat(runCategory));
static cl::opt<int64_t> printEvery(
    "print-every",
    cl::desc("Print one progress line every N steps (0: only the summary)"),
    cl::init(1), cl::cat(runCategory));

static cl::opt<std::string> targetCPU(
    "mcpu",
    cl::desc("Compile for this CPU with its default features instead of the "
             "host's (e.g. x86-64: no F16C, no native bf16)"),
    cl::init(""), cl::cat(runCategory));

namespace {

/// The host's target machine, or that of --mcpu on the host's triple.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine() {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  if (targetCPU.empty())
    return builder->createTargetMachine();
  const llvm::Triple &triple = builder->getTargetTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError(error);
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!info->isCPUStringValid(targetCPU))
    return llvm::createStringError("not a CPU of " + triple.str());
  llvm::orc::JITTargetMachineBuilder chosen(triple);
  chosen.setCPU(targetCPU);
  return chosen.createTargetMachine();
}

/// Reports `message` as amp-run's error and returns the exit code.
int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "amp-run") << message << "\n";
  return 1;
}

std::optional<DType> getDType(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(1))
    return DType::Bool;
  if (type.isInteger(8))
    return DType::I8;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(64))
    return DType::I64;
  return std::nullopt;
}

/// "f32[4x3]" for an array of dtype f32 and shape [4, 3].
std::string describe(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string text = getDTypeName(dtype).str() + "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text + "]";
}

/// "f32[Nx3]": the samples of a batch of `shape`.
std::string describeSamples(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string rest = describe(dtype, shape.drop_front());
  size_t open = rest.find('[');
  return rest.substr(0, open + 1) + (shape.size() > 1 ? "Nx" : "N") +
         rest.substr(open + 1);
}

/// A deterministic generator (splitmix64), the same on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller).
  double normal() {
    double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

private:
  uint64_t state;
};

/// The generator of one purpose (`stream`) and index under the user's seed.
Random makeRandom(uint64_t userSeed, uint64_t stream, uint64_t index) {
  Random mix(userSeed ^ (stream << 56) ^ (index * 0x632be59bd9b4e019ULL));
  return Random(mix.next());
}
enum : uint64_t { kInitStream = 1, kShuffleStream = 2 };

/// Fills `array` (a carried state argument `index`) as `init` says. Glorot
/// (uniform) follows PyTorch's fans: dimension 0 is fan-out, dimension 1
/// fan-in, the other dimensions the receptive field.
void initialize(HostArray &array, const Initializer &init, unsigned index) {
  Random random = makeRandom(seed, kInitStream, index);
  llvm::ArrayRef<int64_t> shape = array.getShape();
  double limit = 0.0;
  if (init.kind == Initializer::Kind::Glorot) {
    double receptive = 1.0;
    for (int64_t d : shape.drop_front(std::min<size_t>(2, shape.size())))
      receptive *= d;
    double fanOut = shape.empty() ? 1.0 : shape[0] * receptive;
    double fanIn = shape.size() < 2 ? fanOut : shape[1] * receptive;
    limit = std::sqrt(6.0 / (fanIn + fanOut));
  }
  for (int64_t i = 0, e = array.getNumElements(); i < e; ++i) {
    switch (init.kind) {
    case Initializer::Kind::Zeros:
      array.setFromDouble(i, 0.0);
      break;
    case Initializer::Kind::Ones:
      array.setFromDouble(i, 1.0);
      break;
    case Initializer::Kind::Glorot:
      array.setFromDouble(i, (2.0 * random.uniform() - 1.0) * limit);
      break;
    case Initializer::Kind::Normal:
      array.setFromDouble(i, init.stddev * random.normal());
      break;
    }
  }
}

/// A JIT-compiled function whose arguments and (out-parameter) results are
/// all memrefs of identity layout, called with HostArrays.
class CompiledFunction {
public:
  /// Looks `name` up, which compiles the module on first use.
  static llvm::Expected<CompiledFunction> get(ExecutionEngine &engine,
                                              StringRef name) {
    auto function = engine.lookupPacked(("_mlir_ciface_" + name).str());
    if (!function)
      return function.takeError();
    return CompiledFunction(*function);
  }

  void call(llvm::ArrayRef<HostArray *> arrays) {
    // Descriptor: base, data, offset, sizes[rank], strides[rank].
    llvm::SmallVector<llvm::SmallVector<int64_t, 8>> descriptors;
    for (HostArray *array : arrays) {
      auto &d = descriptors.emplace_back();
      auto pointer = reinterpret_cast<int64_t>(array->data());
      d.append({pointer, pointer, 0});
      llvm::ArrayRef<int64_t> shape = array->getShape();
      d.append(shape.begin(), shape.end());
      int64_t stride = 1;
      llvm::SmallVector<int64_t> strides(shape.size());
      for (int64_t i = shape.size() - 1; i >= 0; --i) {
        strides[i] = stride;
        stride *= shape[i];
      }
      d.append(strides.begin(), strides.end());
    }
    llvm::SmallVector<void *> pointers, packed;
    for (auto &d : descriptors)
      pointers.push_back(d.data());
    for (void *&pointer : pointers)
      packed.push_back(&pointer);
    function(packed.data());
  }

private:
  explicit CompiledFunction(void (*function)(void **)) : function(function) {}
  void (*function)(void **);
};

/// Data arguments fed from .npy files: dimension 0 of each file is the sample,
/// a batch is as many samples as the argument's dimension 0. The order of an
/// epoch is a permutation drawn from the seed and the epoch number, so any
/// step can be reproduced from the step number alone (resuming needs it).
class Batcher {
public:
  llvm::Error load(const StepSignature &signature) {
    dataArgs = signature.getArguments(ArgumentRole::Data);
    if (dataFiles.size() != dataArgs.size())
      return makeError(
          llvm::Twine("the step has ") + llvm::Twine(dataArgs.size()) +
          " data argument(s) (arguments that are not carried state); give as "
          "many .npy files with --data, got " +
          llvm::Twine(dataFiles.size()));
    for (auto [file, index] : llvm::zip_equal(dataFiles, dataArgs)) {
      llvm::Expected<HostArray> array = readNpy(file);
      if (!array)
        return array.takeError();
      RankedTensorType type = signature.arguments[index].type;
      std::optional<DType> dtype = getDType(type.getElementType());
      llvm::ArrayRef<int64_t> shape = array->getShape();
      if (array->getDType() != dtype || shape.empty() ||
          shape.drop_front() != type.getShape().drop_front())
        return makeError(file + ": holds " +
                         describe(array->getDType(), shape) +
                         "; data argument #" + llvm::Twine(index) + " is " +
                         describe(*dtype, type.getShape()) +
                         " (one batch), so the file needs " +
                         describeSamples(*dtype, type.getShape()));
      if (!arrays.empty() && shape[0] != arrays.front().getShape()[0])
        return makeError(file + ": holds " + llvm::Twine(shape[0]) +
                         " samples, " + dataFiles.front() + " holds " +
                         llvm::Twine(arrays.front().getShape()[0]));
      batchSize = type.getShape()[0];
      arrays.push_back(std::move(*array));
    }
    if (arrays.empty())
      return llvm::Error::success();
    numSamples = arrays.front().getShape()[0];
    if (numSamples < batchSize)
      return makeError(dataFiles.front() + ": holds " +
                       llvm::Twine(numSamples) +
                       " samples, fewer than one batch of " +
                       llvm::Twine(batchSize));
    return llvm::Error::success();
  }

  /// Batches per epoch (the last partial batch is dropped).
  int64_t getBatchesPerEpoch() const {
    return arrays.empty() ? 1 : numSamples / batchSize;
  }

  /// Copies the batch of step `step` (0-based, counted from the first run)
  /// into the data arguments.
  void fill(int64_t step, llvm::MutableArrayRef<HostArray> arguments) {
    if (arrays.empty())
      return;
    int64_t epoch = step / getBatchesPerEpoch();
    if (epoch != orderEpoch) {
      order.resize(numSamples);
      std::iota(order.begin(), order.end(), 0);
      if (shuffle) {
        Random random = makeRandom(seed, kShuffleStream, epoch);
        for (int64_t i = numSamples - 1; i > 0; --i)
          std::swap(order[i], order[random.next() % (i + 1)]);
      }
      orderEpoch = epoch;
    }
    int64_t first = (step % getBatchesPerEpoch()) * batchSize;
    for (auto [array, index] : llvm::zip_equal(arrays, dataArgs)) {
      size_t rowBytes = array.getNumBytes() / numSamples;
      for (int64_t b = 0; b < batchSize; ++b)
        std::memcpy(arguments[index].data() + b * rowBytes,
                    array.data() + order[first + b] * rowBytes, rowBytes);
    }
  }

  llvm::ArrayRef<unsigned> getDataArguments() const { return dataArgs; }

private:
  static llvm::Error makeError(const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }

  llvm::SmallVector<unsigned> dataArgs;
  llvm::SmallVector<HostArray> arrays;
  int64_t numSamples = 0, batchSize = 1;
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
};

/// Applies the AMP pipeline for `options`, or without options the fp32
/// reference (the step as written, markers dropped).
LogicalResult transformStep(ModuleOp module, const AmpPipelineOptions *options) {
  PassManager pm(module->getName());
  if (options)
    buildAmpPipeline(pm, *options);
  else
    pm.addPass(createAmpStripMarkers());
  return pm.run(module);
}

/// The value a piece of scaler state starts with: the scale at `init-scale`,
/// the growth tracker at 0, the overflows left before backoff at
/// `hysteresis`.
std::optional<double> getInitialScalerState(StringRef name,
                                            const AmpPipelineOptions &options) {
  if (name == kScaleStateName)
    return options.initScale;
  if (name == kGrowthTrackerStateName)
    return 0.0;
  if (name == kHysteresisStateName)
    return static_cast<double>(options.hysteresis);
  return std::nullopt;
}

std::string argumentFile(StringRef dir, unsigned index) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "arg" + llvm::Twine(index) + ".npy");
  return std::string(path);
}

/// Loads arg<i>.npy from `dir` into `array`, checking dtype and shape.
llvm::Error loadArgument(StringRef dir, unsigned index, HostArray &array) {
  std::string path = argumentFile(dir, index);
  llvm::Expected<HostArray> loaded = readNpy(path);
  if (!loaded)
    return loaded.takeError();
  if (loaded->getDType() != array.getDType() ||
      loaded->getShape() != array.getShape())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ": holds " + describe(loaded->getDType(), loaded->getShape()) +
            "; argument #" + llvm::Twine(index) + " is " +
            describe(array.getDType(), array.getShape()));
  array = std::move(*loaded);
  return llvm::Error::success();
}

llvm::Error saveArguments(StringRef dir, llvm::ArrayRef<unsigned> indices,
                          llvm::ArrayRef<HostArray> arrays) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create " + dir + ": " +
                                           ec.message());
  for (unsigned index : indices)
    if (llvm::Error error = writeNpy(argumentFile(dir, index), arrays[index]))
      return error;
  return llvm::Error::success();
}

struct StepRecord {
  int64_t step;
  double loss;
  std::optional<double> scale;
  bool foundInf;
  double milliseconds;
};

llvm::Error writeLog(StringRef path, llvm::ArrayRef<StepRecord> records) {
  bool json = path.ends_with(".json");
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    auto number = [&](double v) {
      if (std::isfinite(v))
        os << llvm::format("%.9g", v);
      else
        os << (json ? "null" : std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    };
    if (!json)
      os << "step,loss,scale,found_inf,time_ms\n";
    else
      os << "[\n";
    for (auto [i, r] : llvm::enumerate(records)) {
      if (json)
        os << "  {\"step\": " << r.step << ", \"loss\": ";
      else
        os << r.step << ",";
      number(r.loss);
      os << (json ? ", \"scale\": " : ",");
      if (r.scale)
        number(*r.scale);
      else if (json)
        os << "null";
      os << (json ? ", \"found_inf\": " : ",")
         << (json ? (r.foundInf ? "true" : "false") : (r.foundInf ? "1" : "0"))
         << (json ? ", \"time_ms\": " : ",");
      number(r.milliseconds);
      os << (json ? (i + 1 == records.size() ? "}\n" : "},\n") : "\n");
    }
    if (json)
      os << "]\n";
    return llvm::Error::success();
  });
}

/// The mean of the elements of `array` (the loss is usually 0-d).
double mean(const HostArray &array) {
  double sum = 0.0;
  for (int64_t i = 0, e = array.getNumElements(); i < e; ++i)
    sum += array.getAsDouble(i);
  return sum / std::max<int64_t>(1, array.getNumElements());
}

/// Accuracy of the forward function `name` on the --eval files: it takes the
/// parameters in argument order, then an input batch, and returns logits
/// [batch, classes]; labels are class indices [N] or one-hot rows [N, C].
/// `types` are its argument then result types before lowering.
llvm::Expected<double> evaluate(ExecutionEngine &engine, StringRef name,
                                llvm::ArrayRef<Type> types,
                                llvm::ArrayRef<unsigned> parameters,
                                llvm::MutableArrayRef<HostArray> arguments) {
  auto makeError = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (evalFiles.size() != 2)
    return makeError("--eval takes two .npy files: inputs,labels");
  if (types.size() != parameters.size() + 2)
    return makeError("@" + name + " must take the " +
                     llvm::Twine(parameters.size()) +
                     " parameter(s) of the step and an input batch, and "
                     "return logits");
  for (auto [i, index] : llvm::enumerate(parameters)) {
    auto type = dyn_cast<RankedTensorType>(types[i]);
    if (!type || type.getShape() != arguments[index].getShape() ||
        getDType(type.getElementType()) != arguments[index].getDType())
      return makeError("argument #" + llvm::Twine(i) + " of @" + name +
                       " must have the type of parameter argument #" +
                       llvm::Twine(index) + " of the step");
  }
  auto inputType = dyn_cast<RankedTensorType>(types[parameters.size()]);
  auto logitsType = dyn_cast<RankedTensorType>(types.back());
  if (!inputType || !inputType.hasStaticShape() || inputType.getRank() == 0 ||
      !logitsType || !logitsType.hasStaticShape() || logitsType.getRank() != 2)
    return makeError("@" + name + " must take a static input batch and "
                     "return static logits [batch, classes]");
  llvm::Expected<HostArray> inputs = readNpy(evalFiles[0]);
  if (!inputs)
    return inputs.takeError();
  llvm::Expected<HostArray> labels = readNpy(evalFiles[1]);
  if (!labels)
    return labels.takeError();
  std::optional<DType> inputDType = getDType(inputType.getElementType());
  if (inputs->getDType() != inputDType || inputs->getShape().empty() ||
      inputs->getShape().drop_front() != inputType.getShape().drop_front())
    return makeError(evalFiles[0] + ": holds " +
                     describe(inputs->getDType(), inputs->getShape()) +
                     "; the input of @" + name + " is " +
                     describe(*inputDType, inputType.getShape()));
  int64_t n = inputs->getShape()[0], classes = logitsType.getShape()[1];
  llvm::ArrayRef<int64_t> labelShape = labels->getShape();
  bool oneHot = labelShape.size() == 2;
  if (labelShape.empty() || labelShape[0] != n ||
      (oneHot && labelShape[1] != classes) || labelShape.size() > 2)
    return makeError(evalFiles[1] + ": holds " +
                     describe(labels->getDType(), labelShape) + "; expected " +
                     llvm::Twine(n) + " class indices or one-hot rows of " +
                     llvm::Twine(classes));

  int64_t batch = inputType.getShape()[0];
  HostArray input(*inputDType, inputType.getShape());
  std::optional<DType> logitsDType = getDType(logitsType.getElementType());
  HostArray logits(*logitsDType, logitsType.getShape());
  llvm::SmallVector<HostArray *> callArrays;
  for (unsigned index : parameters)
    callArrays.push_back(&arguments[index]);
  callArrays.append({&input, &logits});
  llvm::Expected<CompiledFunction> function =
      CompiledFunction::get(engine, name);
  if (!function)
    return function.takeError();
  size_t rowBytes = input.getNumBytes() / batch;
  int64_t correct = 0;
  for (int64_t first = 0; first < n; first += batch) {
    int64_t rows = std::min(batch, n - first);
    // The last partial batch is padded with zeros and its padding ignored.
    std::memset(input.data(), 0, input.getNumBytes());
    std::memcpy(input.data(), inputs->data() + first * rowBytes,
                rows * rowBytes);
    function->call(callArrays);
    for (int64_t r = 0; r < rows; ++r) {
      auto argmax = [&](const HostArray &a, int64_t row) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c)
          if (a.getAsDouble(row * classes + c) >
              a.getAsDouble(row * classes + best))
            best = c;
        return best;
      };
      int64_t label = oneHot ? argmax(*labels, first + r)
                             : int64_t(labels->getAsDouble(first + r));
      correct += argmax(logits, r) == label;
    }
  }
  return double(correct) / n;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv, "amp-run: train a compiled training step on the CPU\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AmpDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (std::error_code ec = input.getError())
    return fail("cannot read " + inputFile + ": " + ec.message());
  sourceMgr.AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);

  // What the runner reads from the IR, before the markers go away.
  FailureOr<func::FuncOp> stepFunction = findStepFunction(*module, funcName);
  if (failed(stepFunction))
    return 1;
  FailureOr<StepSignature> signature = readStepSignature(*stepFunction);
  if (failed(signature))
    return 1;
  std::string stepName = signature->functionName;

  std::unique_ptr<AmpPipelineOptions> pipelineOptions;
  if (!ampOptions.empty()) {
    llvm::Expected<std::unique_ptr<AmpPipelineOptions>> parsed =
        parseAmpPipelineOptions(ampOptions);
    if (!parsed)
      return fail("--amp: " + llvm::toString(parsed.takeError()));
    pipelineOptions = std::move(*parsed);
  }
  auto compileStart = std::chrono::steady_clock::now();
  if (failed(transformStep(*module, pipelineOptions.get())))
    return fail("the AMP pipeline failed on " + inputFile);
  auto transformed = module->lookupSymbol<func::FuncOp>(stepName);
  if (failed(addScalerState(*signature, transformed)))
    return 1;
  bool hasEval = !evalFiles.empty();
  func::FuncOp predict;
  if (hasEval) {
    predict = module->lookupSymbol<func::FuncOp>(evalFunc);
    if (!predict || predict.isExternal())
      return fail("--eval needs a function @" + evalFunc + " in " + inputFile);
    predict->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  }
  transformed->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  // The amp.state names are read. Dropped: results becoming out-parameters
  // would carry them onto arguments, where "found_inf" is not a valid name,
  // and LLVM has no use for them.
  auto stateAttr = StringAttr::get(&context, AmpDialect::kStateAttrName);
  for (unsigned i = 0; i < transformed.getNumArguments(); ++i)
    transformed.removeArgAttr(i, stateAttr);
  for (unsigned i = 0; i < transformed.getNumResults(); ++i)
    transformed.removeResultAttr(i, stateAttr);
  // The signatures as tensors, before lowering erases the functions.
  llvm::SmallVector<Type> stepResultTypes(transformed.getResultTypes());
  llvm::SmallVector<Type> predictTypes;
  if (predict) {
    llvm::append_range(predictTypes, predict.getArgumentTypes());
    llvm::append_range(predictTypes, predict.getResultTypes());
  }

  PassManager lowering(&context);
  buildCPULoweringPipeline(lowering);
  if (failed(lowering.run(*module)))
    return fail("lowering " + inputFile + " to LLVM failed");

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      createTargetMachine();
  if (!targetMachine)
    return fail("no target machine for --mcpu=" + targetCPU + ": " +
                llvm::toString(targetMachine.takeError()));
  // f32->bf16 truncation needs __truncsfbf2 on CPUs without native bf16.
  llvm::SmallVector<StringRef> libraries = {AMP_C_RUNNER_UTILS};
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, targetMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  engineOptions.sharedLibPaths = libraries;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(*module, engineOptions,
                              std::move(*targetMachine));
  if (!engine)
    return fail("JIT compilation failed: " +
                llvm::toString(engine.takeError()));
  llvm::Expected<CompiledFunction> step =
      CompiledFunction::get(**engine, stepName);
  if (!step)
    return fail("JIT compilation failed: " + llvm::toString(step.takeError()));
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  // Buffers: one per argument, one per (out-parameter) result.
  llvm::SmallVector<HostArray> arguments, results;
  for (const StepArgument &argument : signature->arguments) {
    std::optional<DType> dtype = getDType(argument.type.getElementType());
    if (!dtype)
      return fail("argument type " + llvm::Twine(argument.type.getRank()) +
                  "-d of an unsupported element type");
    arguments.emplace_back(*dtype, argument.type.getShape());
  }
  for (Type type : stepResultTypes) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? getDType(tensor.getElementType()) : std::nullopt;
    if (!tensor || !tensor.hasStaticShape() || !dtype)
      return fail("@" + stepName +
                  " returns a value that is not a static tensor of a "
                  "supported element type");
    results.emplace_back(*dtype, tensor.getShape());
  }

  llvm::SmallVector<unsigned> carried;
  llvm::SmallVector<unsigned> parameters =
      signature->getArguments(ArgumentRole::Parameter);
  for (auto [index, argument] : llvm::enumerate(signature->arguments))
    if (argument.nextResult)
      carried.push_back(index);

  for (auto [index, argument] : llvm::enumerate(signature->arguments)) {
    if (argument.role == ArgumentRole::Parameter ||
        argument.role == ArgumentRole::OptimizerState)
      initialize(arguments[index], argument.init, index);
    if (argument.role != ArgumentRole::ScalerState)
      continue;
    std::optional<double> start =
        getInitialScalerState(argument.stateName, *pipelineOptions);
    if (!start)
      return fail("@" + stepName + " has scaler state '" +
                  argument.stateName + "' that amp-run does not know");
    for (int64_t i = 0; i < arguments[index].getNumElements(); ++i)
      arguments[index].setFromDouble(i, *start);
  }
  if (!loadParams.empty())
    for (unsigned index : parameters)
      if (llvm::Error error = loadArgument(loadParams, index, arguments[index]))
        return fail(llvm::toString(std::move(error)));

  int64_t firstStep = 0;
  if (!loadState.empty()) {
    for (unsigned index : carried)
      if (llvm::Error error = loadArgument(loadState, index, arguments[index]))
        return fail(llvm::toString(std::move(error)));
    llvm::SmallString<128> stepPath(loadState);
    llvm::sys::path::append(stepPath, "step.npy");
    llvm::Expected<HostArray> stepArray = readNpy(stepPath);
    if (!stepArray)
      return fail(llvm::toString(stepArray.takeError()));
    if (stepArray->getDType() != DType::I64 || stepArray->getShape().size() != 1 ||
        stepArray->getShape()[0] != 2)
      return fail(stepPath + ": expected i64[2] (steps done, seed)");
    firstStep = stepArray->getAsDouble(0);
    seed = static_cast<uint64_t>(stepArray->getAsDouble(1));
  }

  Batcher batcher;
  if (llvm::Error error = batcher.load(*signature))
    return fail(llvm::toString(std::move(error)));
  int64_t steps = numSteps >= 0 ? numSteps
                  : numEpochs >= 0
                      ? numEpochs * batcher.getBatchesPerEpoch()
                      : batcher.getBatchesPerEpoch();

  unsigned injectTarget = ~0u;
  for (unsigned index : batcher.getDataArguments())
    if (isa<FloatType>(signature->arguments[index].type.getElementType())) {
      injectTarget = index;
      break;
    }
  if (injectAtStep > 0 && injectTarget == ~0u)
    return fail("--inject-nonfinite-at-step needs a float data argument");
  if (injectValue != "nan" && injectValue != "inf")
    return fail("--inject-value must be nan or inf, got '" + injectValue + "'");

  std::optional<unsigned> scaleArg = signature->getScalerArgument("scale");
  bool tty = llvm::sys::Process::StandardErrIsDisplayed();
  llvm::SmallVector<StepRecord> records;
  llvm::SmallVector<HostArray *> callArrays;
  for (HostArray &a : arguments)
    callArrays.push_back(&a);
  for (HostArray &r : results)
    callArrays.push_back(&r);

  int64_t skipped = 0;
  llvm::outs() << "amp-run: @" << stepName << " "
               << (ampOptions.empty() ? "as written (no AMP pipeline)"
                                   : "with --amp=\"" + ampOptions + "\"")
               << ", " << parameters.size() << " parameter(s), "
               << signature->getArguments(ArgumentRole::OptimizerState).size()
               << " optimizer state, "
               << batcher.getDataArguments().size() << " data argument(s); "
               << llvm::format("compiled in %.2f s", compileSeconds) << "\n";
  for (int64_t s = firstStep; s < firstStep + steps; ++s) {
    batcher.fill(s, arguments);
    if (s + 1 == injectAtStep)
      arguments[injectTarget].setFromDouble(
          0, injectValue == "nan" ? NAN : INFINITY);
    std::optional<double> scale;
    if (scaleArg)
      scale = arguments[*scaleArg].getAsDouble(0);
    auto start = std::chrono::steady_clock::now();
    step->call(callArrays);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    for (unsigned index : carried)
      std::swap(arguments[index],
                results[*signature->arguments[index].nextResult]);
    StepRecord record{s + 1, mean(results[signature->lossResult]), scale,
                      signature->foundInfResult &&
                          results[*signature->foundInfResult].getAsDouble(0) !=
                              0.0,
                      ms};
    skipped += record.foundInf;
    records.push_back(record);
    if (printEvery > 0 && ((s + 1) % printEvery == 0 || s + 1 == firstStep + steps)) {
      std::string line = llvm::formatv("step {0}/{1}  loss {2:F6}", s + 1,
                                       firstStep + steps, record.loss);
      if (scale)
        line += llvm::formatv("  scale {0}", llvm::format("%g", *scale));
      if (signature->foundInfResult)
        line += llvm::formatv("  skipped {0}", skipped);
      if (tty)
        llvm::errs() << "\r" << line << "\x1b[K";
      else
        llvm::outs() << line << "\n";
    }
  }
  if (tty && printEvery > 0)
    llvm::errs() << "\n";

  double trainSeconds = 0.0;
  for (const StepRecord &record : records)
    trainSeconds += record.milliseconds / 1000.0;
  llvm::outs() << "final: step " << firstStep + steps;
  if (!records.empty())
    llvm::outs() << llvm::formatv("  loss {0:F6}", records.back().loss);
  if (scaleArg)
    llvm::outs() << llvm::format("  scale %g",
                                 arguments[*scaleArg].getAsDouble(0));
  if (signature->foundInfResult)
    llvm::outs() << "  skipped " << skipped;
  llvm::outs() << llvm::format("  time %.3g s\n", trainSeconds);

  if (!logFile.empty())
    if (llvm::Error error = writeLog(logFile, records))
      return fail(llvm::toString(std::move(error)));
  if (!saveParams.empty())
    if (llvm::Error error = saveArguments(saveParams, parameters, arguments))
      return fail(llvm::toString(std::move(error)));
  if (!saveState.empty()) {
    if (llvm::Error error = saveArguments(saveState, carried, arguments))
      return fail(llvm::toString(std::move(error)));
    HostArray stepArray(DType::I64, {2});
    stepArray.setFromDouble(0, firstStep + steps);
    stepArray.setFromDouble(1, static_cast<double>(seed));
    llvm::SmallString<128> stepPath(saveState);
    llvm::sys::path::append(stepPath, "step.npy");
    if (llvm::Error error = writeNpy(stepPath, stepArray))
      return fail(llvm::toString(std::move(error)));
  }
  if (hasEval) {
    llvm::Expected<double> accuracy =
        evaluate(**engine, evalFunc, predictTypes, parameters, arguments);
    if (!accuracy)
      return fail(llvm::toString(accuracy.takeError()));
    llvm::outs() << llvm::formatv("eval: accuracy {0:F4}\n", *accuracy);
  }
  return 0;
}
