//===- amp-run.cpp - Train a compiled training step on the CPU ------------===//
//
// Reads a training step (docs/TrainingStepIR.md), applies the AMP pipeline
// (or, without AMP options, runs the step in fp32 as written), lowers and
// JIT-compiles it (amp/Runner/CompiledStep.h, shared with the Python
// bindings) and calls it once per step with batches from .npy files; it adds
// the command line, the data, logs, checkpoints and evaluation.
// docs/Running.md is the user's reference.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Runner/CompiledStep.h"
#include "amp/Runner/Npy.h"
#include "amp/Step/StepSignature.h"
#include "StepToolOptions.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;

namespace cl = llvm::cl;

static cl::OptionCategory runCategory("amp-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<step.mlir>"),
                                      cl::cat(runCategory));
static StepToolOptions stepOptions(runCategory);
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
static cl::opt<int64_t> batchSizeOption(
    "batch-size",
    cl::desc("Samples per step; required when the step's batch dimension is "
             "dynamic, else it must equal the static one"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<bool> keepLastBatch(
    "keep-last-batch",
    cl::desc("Run the last partial batch of an epoch instead of dropping it "
             "(steps with a dynamic batch dimension)"),
    cl::init(false), cl::cat(runCategory));
static cl::list<std::string> hyperparameterValues(
    "hyper",
    cl::desc("NAME=VALUE: sets a hyperparameter (an input of the step's "
             "amp.update, e.g. a learning rate) for every step, instead of "
             "its amp.value"),
    cl::cat(runCategory));
static cl::opt<std::string> loadParams(
    "load-params",
    cl::desc("Directory of <name>.npy files (the arguments' amp.name, else "
             "arg<i>) to start the parameters and buffers from"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<std::string> saveParams(
    "save-params",
    cl::desc("Directory to write the final parameters and buffers to"),
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
static cl::opt<bool> vectorize(
    "vectorize",
    cl::desc("Vectorize the cheap linalg ops (amp-lower-to-llvm's vectorize "
             "option; =false: scalar loops only, same results)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<std::string> beforeLowering(
    "before-lowering",
    cl::desc("Passes to run on the step after the AMP pipeline and before "
             "the CPU lowering, e.g. the GPU lowering's tensor-level "
             "rewrites: amp-gpu-tensor-rewrites"),
    cl::init(""), cl::cat(runCategory));

namespace {

/// Reports `message` as amp-run's error and returns the exit code.
int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "amp-run") << message << "\n";
  return 1;
}

/// "f32[Nx3]": the samples of a batch of `shape`.
std::string describeSamples(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string rest = describeArray(dtype, shape.drop_front());
  size_t open = rest.find('[');
  return rest.substr(0, open + 1) + (shape.size() > 1 ? "Nx" : "N") +
         rest.substr(open + 1);
}

/// Data arguments fed from .npy files: dimension 0 of each file is the sample,
/// a batch is --batch-size samples (the arguments' dimension 0 when static).
/// The order of an epoch is a permutation drawn from the seed and the epoch
/// number, so any step can be reproduced from the step number alone
/// (resuming needs it).
class Batcher {
public:
  llvm::Error load(const StepSignature &signature) {
    dataArgs = signature.getArguments(ArgumentRole::Data);
    dynamicBatch = signature.dynamicBatch;
    if (dataFiles.size() != dataArgs.size())
      return makeError(
          llvm::Twine("the step has ") + llvm::Twine(dataArgs.size()) +
          " data argument(s) (arguments that are not carried state); give as "
          "many .npy files with --data, got " +
          llvm::Twine(dataFiles.size()));
    if (keepLastBatch && !dynamicBatch)
      return makeError("--keep-last-batch needs a step whose batch dimension "
                       "is dynamic; this one takes batches of a fixed size");
    if (dynamicBatch && !dataArgs.empty() && batchSizeOption <= 0)
      return makeError("the step's batch dimension is dynamic; give the "
                       "batch size with --batch-size N");
    for (auto [file, index] : llvm::zip_equal(dataFiles, dataArgs)) {
      llvm::Expected<HostArray> array = readNpy(file);
      if (!array)
        return array.takeError();
      const StepArgument &argument = signature.arguments[index];
      RankedTensorType type = argument.type;
      std::optional<DType> dtype = getDType(type.getElementType());
      llvm::ArrayRef<int64_t> shape = array->getShape();
      if (array->getDType() != dtype || shape.empty() ||
          shape.drop_front() != type.getShape().drop_front())
        return makeError(file + ": holds " +
                         describeArray(array->getDType(), shape) +
                         "; data argument '" + argument.name + "' (#" +
                         llvm::Twine(index) + ") is " +
                         describeType(*dtype, type) +
                         " (one batch), so the file needs " +
                         describeSamples(*dtype, type.getShape()));
      if (!arrays.empty() && shape[0] != arrays.front().getShape()[0])
        return makeError(file + ": holds " + llvm::Twine(shape[0]) +
                         " samples, " + dataFiles.front() + " holds " +
                         llvm::Twine(arrays.front().getShape()[0]));
      if (!dynamicBatch) {
        batchSize = type.getShape()[0];
        if (batchSizeOption > 0 && batchSizeOption != batchSize)
          return makeError("--batch-size " + llvm::Twine(batchSizeOption) +
                           ": the step takes batches of " +
                           llvm::Twine(batchSize) + " (data argument '" +
                           argument.name + "' is " +
                           describeArray(*dtype, type.getShape()) + ")");
      } else {
        batchSize = batchSizeOption;
      }
      samples.push_back(*dtype);
      arrays.push_back(std::move(*array));
    }
    if (arrays.empty())
      return llvm::Error::success();
    numSamples = arrays.front().getShape()[0];
    if (numSamples < batchSize && !keepLastBatch)
      return makeError(dataFiles.front() + ": holds " +
                       llvm::Twine(numSamples) +
                       " samples, fewer than one batch of " +
                       llvm::Twine(batchSize));
    return llvm::Error::success();
  }

  /// Batches per epoch: the last partial batch is dropped, unless
  /// --keep-last-batch runs it.
  int64_t getBatchesPerEpoch() const {
    if (arrays.empty())
      return 1;
    return keepLastBatch ? llvm::divideCeil(numSamples, batchSize)
                         : numSamples / batchSize;
  }
  int64_t getBatchSize() const { return batchSize; }

  /// Sets the data arguments of `step` to the batch of step `step` (0-based,
  /// counted from the first run).
  llvm::Error fill(int64_t stepNumber, CompiledStep &step) {
    if (arrays.empty())
      return llvm::Error::success();
    int64_t epoch = stepNumber / getBatchesPerEpoch();
    if (epoch != orderEpoch) {
      order.resize(numSamples);
      std::iota(order.begin(), order.end(), 0);
      if (shuffle) {
        Random random = makeRandom(seed, RandomStream::Shuffle, epoch);
        for (int64_t i = numSamples - 1; i > 0; --i)
          std::swap(order[i], order[random.next() % (i + 1)]);
      }
      orderEpoch = epoch;
    }
    int64_t first = (stepNumber % getBatchesPerEpoch()) * batchSize;
    int64_t rows = std::min(batchSize, numSamples - first);
    for (auto [array, index, dtype] : llvm::zip_equal(arrays, dataArgs, samples)) {
      llvm::SmallVector<int64_t> shape(array.getShape());
      shape[0] = rows;
      HostArray batch(dtype, shape);
      size_t rowBytes = array.getNumBytes() / numSamples;
      for (int64_t b = 0; b < rows; ++b)
        std::memcpy(batch.data() + b * rowBytes,
                    array.data() + order[first + b] * rowBytes, rowBytes);
      if (llvm::Error error = step.setArgument(index, std::move(batch)))
        return error;
    }
    return llvm::Error::success();
  }

  llvm::ArrayRef<unsigned> getDataArguments() const { return dataArgs; }

private:
  static llvm::Error makeError(const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }

  llvm::SmallVector<unsigned> dataArgs;
  llvm::SmallVector<HostArray> arrays;
  llvm::SmallVector<DType> samples;
  bool dynamicBatch = false;
  int64_t numSamples = 0, batchSize = 1;
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
};

/// The file of an argument in a parameter or state directory: its name
/// (`amp.name`, else arg<i>) with .npy.
std::string argumentFile(StringRef dir, const StepArgument &argument) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, argument.name + ".npy");
  return std::string(path);
}

/// Loads the file of argument `index` from `dir`; setArgument checks its
/// dtype and shape.
llvm::Error loadArgument(StringRef dir, CompiledStep &step, unsigned index) {
  std::string path = argumentFile(dir, step.getSignature().arguments[index]);
  llvm::Expected<HostArray> loaded = readNpy(path);
  if (!loaded)
    return loaded.takeError();
  if (llvm::Error error = step.setArgument(index, std::move(*loaded)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Error saveArguments(StringRef dir, const CompiledStep &step,
                          llvm::ArrayRef<unsigned> indices) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create " + dir + ": " +
                                           ec.message());
  for (unsigned index : indices)
    if (llvm::Error error =
            writeNpy(argumentFile(dir, step.getSignature().arguments[index]),
                     step.getArguments()[index]))
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

/// Accuracy of the forward function `name` on the --eval files: it takes the
/// parameters and buffers (the model) in argument order, then an input
/// batch, and returns logits [batch, classes]; labels are class indices [N]
/// or one-hot rows [N, C]. A function with a dynamic batch runs `batchSize`
/// samples at a time (the last batch partial); one with a static batch runs
/// its own size, the last batch padded with zeros.
llvm::Expected<double> evaluate(CompiledStep &step, StringRef name,
                                llvm::ArrayRef<unsigned> model,
                                int64_t batchSize) {
  FunctionType functionType = step.getFunctionType(name);
  llvm::SmallVector<Type> types(functionType.getInputs());
  llvm::append_range(types, functionType.getResults());
  llvm::MutableArrayRef<HostArray> arguments = step.getArguments();
  auto makeError = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (evalFiles.size() != 2)
    return makeError("--eval takes two .npy files: inputs,labels");
  if (types.size() != model.size() + 2)
    return makeError("@" + name + " must take the " +
                     llvm::Twine(model.size()) +
                     " parameter(s) and buffer(s) of the step and an input "
                     "batch, and return logits");
  for (auto [i, index] : llvm::enumerate(model)) {
    auto type = dyn_cast<RankedTensorType>(types[i]);
    if (!type || type.getShape() != arguments[index].getShape() ||
        getDType(type.getElementType()) != arguments[index].getDType())
      return makeError("argument #" + llvm::Twine(i) + " of @" + name +
                       " must have the type of argument '" +
                       step.getSignature().arguments[index].name +
                       "' of the step");
  }
  auto inputType = dyn_cast<RankedTensorType>(types[model.size()]);
  auto logitsType = dyn_cast<RankedTensorType>(types.back());
  auto isBatched = [](RankedTensorType type, int64_t rank) {
    return type && (rank < 0 ? type.getRank() > 0 : type.getRank() == rank) &&
           llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
  };
  if (!isBatched(inputType, -1) || !isBatched(logitsType, 2) ||
      inputType.isDynamicDim(0) != logitsType.isDynamicDim(0))
    return makeError("@" + name + " must take an input batch and return "
                     "logits [batch, classes] of the same batch size, static "
                     "or dynamic");
  bool dynamic = inputType.isDynamicDim(0);
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
                     describeArray(inputs->getDType(), inputs->getShape()) +
                     "; the input of @" + name + " takes samples " +
                     describeSamples(*inputDType, inputType.getShape()));
  int64_t n = inputs->getShape()[0], classes = logitsType.getShape()[1];
  llvm::ArrayRef<int64_t> labelShape = labels->getShape();
  bool oneHot = labelShape.size() == 2;
  if (labelShape.empty() || labelShape[0] != n ||
      (oneHot && labelShape[1] != classes) || labelShape.size() > 2)
    return makeError(evalFiles[1] + ": holds " +
                     describeArray(labels->getDType(), labelShape) + "; expected " +
                     llvm::Twine(n) + " class indices or one-hot rows of " +
                     llvm::Twine(classes));

  int64_t batch = dynamic ? batchSize : inputType.getShape()[0];
  std::optional<DType> logitsDType = getDType(logitsType.getElementType());
  size_t rowBytes = inputs->getNumBytes() / n;
  int64_t correct = 0;
  for (int64_t first = 0; first < n; first += batch) {
    int64_t rows = std::min(batch, n - first);
    // A static batch pads the last partial batch with zeros, ignored.
    int64_t size = dynamic ? rows : batch;
    llvm::SmallVector<int64_t> shape(inputType.getShape());
    shape[0] = size;
    HostArray input(*inputDType, shape);
    HostArray logits(*logitsDType, {size, classes});
    std::memcpy(input.data(), inputs->data() + first * rowBytes,
                rows * rowBytes);
    llvm::SmallVector<HostArray *> callArrays;
    for (unsigned index : model)
      callArrays.push_back(&arguments[index]);
    callArrays.append({&input, &logits});
    if (llvm::Error error = step.call(name, callArrays))
      return std::move(error);
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

/// Applies the --hyper NAME=VALUE options.
llvm::Error setHyperparameters(CompiledStep &step) {
  const StepSignature &signature = step.getSignature();
  llvm::SmallVector<unsigned> hyperparameters =
      signature.getArguments(ArgumentRole::Hyperparameter);
  for (StringRef option : hyperparameterValues) {
    auto [name, text] = option.split('=');
    double value;
    if (text.getAsDouble(value))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--hyper " + option + ": expected NAME=VALUE with a number");
    const unsigned *index = llvm::find_if(hyperparameters, [&](unsigned i) {
      return signature.arguments[i].name == name;
    });
    if (index == hyperparameters.end()) {
      std::string known;
      for (unsigned i : hyperparameters)
        known += (known.empty() ? "" : ", ") + signature.arguments[i].name;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--hyper " + option + ": the step has no hyperparameter '" + name +
              "' (it has: " + (known.empty() ? "none" : known) + ")");
    }
    HostArray array(step.getArguments()[*index].getDType(),
                    signature.arguments[*index].type.getShape());
    for (int64_t i = 0; i < array.getNumElements(); ++i)
      array.setFromDouble(i, value);
    if (llvm::Error error = step.setArgument(*index, std::move(array)))
      return error;
  }
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // For --before-lowering.
  registerAllPasses();
  amp::registerAllAmpPasses();
  amp::registerAllAmpPipelines();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv, "amp-run: train a compiled training step on the CPU\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<AmpDialect>();
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

  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> parsedOptions =
      stepOptions.getPipelineOptions();
  if (!parsedOptions)
    return fail(llvm::toString(parsedOptions.takeError()));
  std::unique_ptr<AmpPipelineOptions> pipelineOptions =
      std::move(*parsedOptions);
  bool hasEval = !evalFiles.empty();
  if (hasEval) {
    auto predict = module->lookupSymbol<func::FuncOp>(evalFunc);
    if (!predict || predict.isExternal())
      return fail("--eval needs a function @" + evalFunc + " in " + inputFile);
  }
  StepCompileOptions compileOptions;
  compileOptions.amp = pipelineOptions.get();
  compileOptions.function = stepOptions.function;
  compileOptions.cpu = targetCPU;
  compileOptions.vectorize = vectorize;
  compileOptions.beforeLowering = beforeLowering;
  if (hasEval)
    compileOptions.extraFunctions.push_back(evalFunc);
  llvm::Expected<std::unique_ptr<CompiledStep>> compiled =
      CompiledStep::compile(*module, compileOptions);
  if (!compiled)
    return fail(inputFile + ": " + llvm::toString(compiled.takeError()));
  CompiledStep &step = **compiled;
  const StepSignature &signature = step.getSignature();
  llvm::StringRef stepName = step.getName();
  llvm::MutableArrayRef<HostArray> arguments = step.getArguments();

  llvm::ArrayRef<unsigned> carried = step.getCarriedArguments();
  llvm::SmallVector<unsigned> model = signature.getModelArguments();
  step.initializeState(seed);
  if (llvm::Error error = setHyperparameters(step))
    return fail(llvm::toString(std::move(error)));
  if (!loadParams.empty())
    for (unsigned index : model)
      if (llvm::Error error = loadArgument(loadParams, step, index))
        return fail(llvm::toString(std::move(error)));

  int64_t firstStep = 0;
  if (!loadState.empty()) {
    for (unsigned index : carried)
      if (llvm::Error error = loadArgument(loadState, step, index))
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
  if (llvm::Error error = batcher.load(signature))
    return fail(llvm::toString(std::move(error)));
  int64_t steps = numSteps >= 0 ? numSteps
                  : numEpochs >= 0
                      ? numEpochs * batcher.getBatchesPerEpoch()
                      : batcher.getBatchesPerEpoch();

  unsigned injectTarget = ~0u;
  for (unsigned index : batcher.getDataArguments())
    if (isa<FloatType>(signature.arguments[index].type.getElementType())) {
      injectTarget = index;
      break;
    }
  if (injectAtStep > 0 && injectTarget == ~0u)
    return fail("--inject-nonfinite-at-step needs a float data argument");
  if (injectValue != "nan" && injectValue != "inf")
    return fail("--inject-value must be nan or inf, got '" + injectValue + "'");

  std::optional<unsigned> scaleArg =
      signature.getScalerArgument(kScaleStateName);
  bool tty = llvm::sys::Process::StandardErrIsDisplayed();
  llvm::SmallVector<StepRecord> records;

  int64_t skipped = 0;
  size_t numBuffers = signature.getArguments(ArgumentRole::Buffer).size();
  size_t numHyperparameters =
      signature.getArguments(ArgumentRole::Hyperparameter).size();
  llvm::outs() << "amp-run: @" << stepName << " "
               << (stepOptions.amp.empty()
                      ? "as written (no AMP pipeline)"
                      : "with --amp=\"" + stepOptions.amp + "\"")
               << ", " << signature.getArguments(ArgumentRole::Parameter).size()
               << " parameter(s), "
               << (numBuffers ? std::to_string(numBuffers) + " buffer(s), "
                              : std::string())
               << signature.getArguments(ArgumentRole::OptimizerState).size()
               << " optimizer state, "
               << (numHyperparameters
                       ? std::to_string(numHyperparameters) +
                             " hyperparameter(s), "
                       : std::string())
               << batcher.getDataArguments().size() << " data argument(s)"
               << (signature.dynamicBatch
                       ? " (dynamic batch, " +
                             std::to_string(batcher.getBatchSize()) +
                             " samples a step)"
                       : std::string())
               << "; "
               << llvm::format("compiled in %.2f s", step.getCompileSeconds())
               << "\n";
  for (int64_t s = firstStep; s < firstStep + steps; ++s) {
    if (llvm::Error error = batcher.fill(s, step))
      return fail(llvm::toString(std::move(error)));
    if (s + 1 == injectAtStep)
      arguments[injectTarget].setFromDouble(
          0, injectValue == "nan" ? NAN : INFINITY);
    llvm::Expected<StepOutcome> outcome = step.run();
    if (!outcome)
      return fail(llvm::toString(outcome.takeError()));
    StepRecord record{s + 1, outcome->loss, outcome->scale, outcome->foundInf,
                      outcome->milliseconds};
    skipped += record.foundInf;
    records.push_back(record);
    if (printEvery > 0 && ((s + 1) % printEvery == 0 || s + 1 == firstStep + steps)) {
      std::string line = llvm::formatv("step {0}/{1}  loss {2:F6}", s + 1,
                                       firstStep + steps, record.loss);
      if (record.scale)
        line += llvm::formatv("  scale {0}", llvm::format("%g", *record.scale));
      if (signature.foundInfResult)
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
  if (signature.foundInfResult)
    llvm::outs() << "  skipped " << skipped;
  llvm::outs() << llvm::format("  time %.3g s\n", trainSeconds);

  if (!logFile.empty())
    if (llvm::Error error = writeLog(logFile, records))
      return fail(llvm::toString(std::move(error)));
  if (!saveParams.empty())
    if (llvm::Error error = saveArguments(saveParams, step, model))
      return fail(llvm::toString(std::move(error)));
  if (!saveState.empty()) {
    if (llvm::Error error = saveArguments(saveState, step, carried))
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
        evaluate(step, evalFunc, model, batcher.getBatchSize());
    if (!accuracy)
      return fail(llvm::toString(accuracy.takeError()));
    llvm::outs() << llvm::formatv("eval: accuracy {0:F4}\n", *accuracy);
  }
  return 0;
}
