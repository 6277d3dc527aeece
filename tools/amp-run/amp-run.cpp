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
#include "amp/Runner/Batcher.h"
#include "amp/Runner/Checkpoint.h"
#include "amp/Runner/CompiledStep.h"
#include "amp/Runner/Evaluation.h"
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
#include <malloc.h>
#include <cstring>
#include <array>

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
             "optimizer and scaler state, step), atomically"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<int64_t> saveEvery(
    "save-every",
    cl::desc("With --save-state: also write it every N steps, so that an "
             "interrupted run resumes from the last N (0: at the end only)"),
    cl::init(0), cl::cat(runCategory));
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
static cl::opt<int> injectRank(
    "inject-rank",
    cl::desc("Data-parallel runs: the rank whose data "
             "--inject-nonfinite-at-step changes"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<int64_t> checkReplicas(
    "check-replicas",
    cl::desc("Data-parallel runs: every N steps, compare a hash of the "
             "parameters, optimizer and scaler state across the ranks and "
             "stop with an error naming the step where they differ (0: "
             "never)"),
    cl::init(0), cl::cat(runCategory));
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
static cl::opt<bool> cpuLibrary(
    "cpu-library",
    cl::desc("Hand matmuls and convolutions to oneDNN (amp-lower-to-llvm's "
             "library option; =false: loops, the same results up to summation "
             "order)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<bool> channelsLast(
    "channels-last",
    cl::desc("Lay out the convolutions' images channels-last "
             "(amp-lower-to-llvm's channels-last option; =false: NCHW, "
             "reordered in each oneDNN call)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<bool> f32Operands(
    "f32-operands",
    cl::desc("Store the bf16 and f16 operands of the matmuls and convolutions "
             "that this host's runtime extends to f32 in each call in f32, "
             "rounded to their type (amp-lower-to-llvm's f32-matmul-types and "
             "f32-convolution-types): the same numbers multiplied, fewer "
             "conversions, more memory"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<std::string> beforeLowering(
    "before-lowering",
    cl::desc("Passes to run on the step after the AMP pipeline and before "
             "the CPU lowering, e.g. the GPU lowering's tensor-level "
             "rewrites: amp-gpu-tensor-rewrites"),
    cl::init(""), cl::cat(runCategory));

namespace {

/// --threads. libMLIR already registers a (hidden, undescribed) `threads`
/// option of type int, so amp-run adopts it instead of declaring a second.
cl::opt<int> &adoptThreadsOption() {
  auto *option =
      static_cast<cl::opt<int> *>(cl::getRegisteredOptions().lookup("threads"));
  option->setDescription("Threads of the library calls and of the compiled "
                         "loops (default 1: deterministic; the loops give the "
                         "same bits with any number)");
  option->setHiddenFlag(cl::NotHidden);
  option->addCategory(runCategory);
  option->setInitialValue(1);
  return *option;
}

/// The MPI job of a data-parallel step, once it is compiled.
const MpiWorld *world = nullptr;

/// Reports `message` as amp-run's error and returns the exit code. In a job
/// of several ranks the error may be this rank's alone, while the others
/// wait for it in a collective: it ends the whole job.
int fail(const llvm::Twine &message) {
  if (!world || world->getSize() == 1) {
    llvm::WithColor::error(llvm::errs(), "amp-run") << message << "\n";
    return 1;
  }
  // One write: the abort may kill another rank in the middle of its own.
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::WithColor::error(os, "amp-run")
      << "rank " << world->getRank() << ": " << message << "\n";
  llvm::errs() << text;
  llvm::errs().flush();
  world->abort(1);
}

/// Reports an error that every rank finds at the same point (a set-up that
/// cannot train): each rank ends as one process would, and no abort cuts
/// the job's output short before a rank's message is forwarded.
int failOnEveryRank(const llvm::Twine &message) {
  if (!world || world->getSize() == 1)
    return fail(message);
  llvm::WithColor::error(llvm::errs(), "amp-run")
      << "rank " << world->getRank() << ": " << message << "\n";
  return 1;
}

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

/// The batches of the --data files, as the batch options say: this rank's
/// share of each of a data-parallel run.
llvm::Expected<Batcher> loadBatcher(const StepSignature &signature) {
  size_t numData = signature.getArguments(ArgumentRole::Data).size();
  if (dataFiles.size() != numData)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the step has " + llvm::Twine(numData) +
            " data argument(s) (arguments that are not carried state); give "
            "as many .npy files with --data, got " +
            llvm::Twine(dataFiles.size()));
  std::vector<HostArray> dataSets;
  for (const std::string &file : dataFiles) {
    llvm::Expected<HostArray> array = readNpy(file);
    if (!array)
      return array.takeError();
    dataSets.push_back(std::move(*array));
  }
  BatchOptions options;
  options.batchSize = batchSizeOption;
  options.keepLastBatch = keepLastBatch;
  options.shuffle = shuffle;
  options.seed = seed;
  if (world) {
    options.shard = world->getRank();
    options.numShards = world->getSize();
  }
  return Batcher::create(signature, std::move(dataSets),
                         std::vector<std::string>(dataFiles.begin(),
                                                  dataFiles.end()),
                         options);
}

/// The accuracy of --eval-func on the --eval files.
llvm::Expected<double> evaluate(CompiledStep &step, int64_t batchSize) {
  if (evalFiles.size() != 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--eval takes two .npy files: inputs,labels");
  LabeledData data;
  data.inputsName = evalFiles[0];
  data.labelsName = evalFiles[1];
  for (auto [file, array] :
       llvm::zip_equal(evalFiles, std::array<HostArray *, 2>{&data.inputs,
                                                             &data.labels})) {
    llvm::Expected<HostArray> loaded = readNpy(file);
    if (!loaded)
      return loaded.takeError();
    *array = std::move(*loaded);
  }
  return evaluateAccuracy(step, evalFunc, data, batchSize);
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
  // A step allocates and frees its intermediate buffers at every call. Above
  // glibc's default thresholds a large one is mmapped and unmapped, or the
  // heap trimmed, every time, and its pages fault in again at every step
  // (10 ms of a 50 ms step with 7 MB of gradients): keep them in the heap.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // For --before-lowering.
  registerAllPasses();
  amp::registerAllAmpPasses();
  amp::registerAllAmpPipelines();
  cl::opt<int> &threads = adoptThreadsOption();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv, "amp-run: train a compiled training step on the CPU\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  amp::registerAllAmpDialects(registry);
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

  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> pipelineOptions =
      stepOptions.getPipelineOptions();
  if (!pipelineOptions)
    return fail(llvm::toString(pipelineOptions.takeError()));
  bool hasEval = !evalFiles.empty();
  if (hasEval) {
    auto predict = module->lookupSymbol<func::FuncOp>(evalFunc);
    if (!predict || predict.isExternal())
      return fail("--eval needs a function @" + evalFunc + " in " + inputFile);
  }
  StepCompileOptions compileOptions;
  compileOptions.amp = pipelineOptions->get();
  compileOptions.function = stepOptions.function;
  compileOptions.cpu = targetCPU;
  compileOptions.vectorize = vectorize;
  compileOptions.library = cpuLibrary;
  compileOptions.channelsLast = channelsLast;
  compileOptions.f32Operands = f32Operands;
  compileOptions.threads = threads;
  compileOptions.beforeLowering = beforeLowering;
  if (hasEval)
    compileOptions.extraFunctions.push_back(evalFunc);
  llvm::Expected<std::unique_ptr<CompiledStep>> compiled =
      CompiledStep::compile(*module, compileOptions);
  if (!compiled)
    return fail(inputFile + ": " + llvm::toString(compiled.takeError()));
  CompiledStep &step = **compiled;
  world = step.getWorld();
  int rank = world ? world->getRank() : 0;
  int ranks = world ? world->getSize() : 1;
  // Rank 0 alone prints, logs, writes files and evaluates.
  bool lead = rank == 0;
  llvm::raw_ostream &out = lead ? llvm::outs() : llvm::nulls();
  const StepSignature &signature = step.getSignature();
  llvm::StringRef stepName = step.getName();
  llvm::MutableArrayRef<HostArray> arguments = step.getArguments();

  llvm::SmallVector<unsigned> model = signature.getModelArguments();
  step.initializeState(seed);
  if (!loadParams.empty())
    for (unsigned index : model)
      if (llvm::Error error = loadArgument(loadParams, step, index))
        return fail(llvm::toString(std::move(error)));

  int64_t firstStep = 0;
  if (!loadState.empty()) {
    llvm::Expected<RunPosition> position = loadCheckpoint(loadState, step);
    if (!position)
      return fail(llvm::toString(position.takeError()));
    firstStep = position->stepsDone;
    seed = position->seed;
  }
  // After the checkpoint, whose hyperparameters --hyper overrides.
  if (llvm::Error error = setHyperparameters(step))
    return fail(llvm::toString(std::move(error)));
  if (saveEvery < 0 || (saveEvery > 0 && saveState.empty()))
    return fail("--save-every N takes N >= 0 and needs --save-state DIR");

  llvm::Expected<Batcher> loaded = loadBatcher(signature);
  if (!loaded)
    return failOnEveryRank(llvm::toString(loaded.takeError()));
  Batcher &batcher = *loaded;
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
  if (injectRank < 0 || injectRank >= ranks)
    return fail("--inject-rank " + llvm::Twine(injectRank) +
                ": the run has ranks 0 to " + llvm::Twine(ranks - 1));
  if (checkReplicas > 0 && !world)
    return fail("--check-replicas compares the ranks of a data-parallel "
                "run; the step is not one (data-parallel=mpi)");

  std::optional<unsigned> scaleArg =
      signature.getScalerArgument(kScaleStateName);
  bool tty = llvm::sys::Process::StandardErrIsDisplayed();
  llvm::SmallVector<StepRecord> records;

  int64_t skipped = 0;
  size_t numBuffers = signature.getArguments(ArgumentRole::Buffer).size();
  size_t numHyperparameters =
      signature.getArguments(ArgumentRole::Hyperparameter).size();
  out << "amp-run: @" << stepName << " "
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
               << (world ? "; data-parallel over " + std::to_string(ranks) +
                               " rank(s), " +
                               std::to_string(batcher.getShardSize()) +
                               " samples each"
                         : std::string())
               << "; "
               << llvm::format("compiled in %.2f s", step.getCompileSeconds())
               << "\n";
  for (int64_t s = firstStep; s < firstStep + steps; ++s) {
    if (llvm::Error error = batcher.fill(s, step))
      return fail(llvm::toString(std::move(error)));
    if (s + 1 == injectAtStep && rank == injectRank)
      arguments[injectTarget].setFromDouble(
          0, injectValue == "nan" ? NAN : INFINITY);
    llvm::Expected<StepOutcome> outcome = step.run();
    if (!outcome)
      return fail(llvm::toString(outcome.takeError()));
    // The loss of the whole batch: the mean of the ranks' means.
    double loss = ranks > 1 ? world->sum(outcome->loss) / ranks : outcome->loss;
    StepRecord record{s + 1, loss, outcome->scale, outcome->foundInf,
                      outcome->milliseconds};
    skipped += record.foundInf;
    records.push_back(record);
    if (checkReplicas > 0 && (s + 1) % checkReplicas == 0)
      if (llvm::Error error = step.checkReplicas()) {
        // Every rank finds it: no rank is left waiting.
        if (lead)
          llvm::WithColor::error(llvm::errs(), "amp-run")
              << "step " << s + 1 << ": " << llvm::toString(std::move(error))
              << "\n";
        else
          llvm::consumeError(std::move(error));
        return 1;
      }
    if (lead && saveEvery > 0 && (s + 1) % saveEvery == 0 &&
        s + 1 != firstStep + steps)
      if (llvm::Error error =
              saveCheckpoint(saveState, step, {s + 1, seed}))
        return fail(llvm::toString(std::move(error)));
    if (lead && printEvery > 0 &&
        ((s + 1) % printEvery == 0 || s + 1 == firstStep + steps)) {
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
  if (lead && tty && printEvery > 0)
    llvm::errs() << "\n";

  double trainSeconds = 0.0;
  for (const StepRecord &record : records)
    trainSeconds += record.milliseconds / 1000.0;
  out << "final: step " << firstStep + steps;
  if (!records.empty())
    out << llvm::formatv("  loss {0:F6}", records.back().loss);
  if (scaleArg)
    out << llvm::format("  scale %g", arguments[*scaleArg].getAsDouble(0));
  if (signature.foundInfResult)
    out << "  skipped " << skipped;
  out << llvm::format("  time %.3g s\n", trainSeconds);
  if (!lead)
    return 0;

  if (!logFile.empty())
    if (llvm::Error error = writeLog(logFile, records))
      return fail(llvm::toString(std::move(error)));
  if (!saveParams.empty())
    if (llvm::Error error = saveArguments(saveParams, step, model))
      return fail(llvm::toString(std::move(error)));
  if (!saveState.empty())
    if (llvm::Error error =
            saveCheckpoint(saveState, step, {firstStep + steps, seed}))
      return fail(llvm::toString(std::move(error)));
  if (hasEval) {
    llvm::Expected<double> accuracy = evaluate(step, batcher.getBatchSize());
    if (!accuracy)
      return fail(llvm::toString(accuracy.takeError()));
    llvm::outs() << llvm::formatv("eval: accuracy {0:F4}\n", *accuracy);
  }
  return 0;
}
