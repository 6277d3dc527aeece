//===- AmpMLIRModule.cpp - The _amp_mlir extension module -----------------===//
//
// A thin nanobind layer over the C++ API: option parsing, the pipeline with
// its report and explanations (amp/Pipelines/TransformStep.h) and the CPU
// runner (amp/Runner/CompiledStep.h). Arrays cross as (dtype name, shape,
// bytes); amp_mlir/__init__.py maps them onto numpy. The libraries are built
// without exceptions: every llvm::Error and MLIR diagnostic becomes a Python
// ValueError here, at the boundary, and nothing else throws.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Runner/Batcher.h"
#include "amp/Runner/Checkpoint.h"
#include "amp/Runner/CompiledStep.h"
#include "amp/Runner/Evaluation.h"
#include "amp/Pipelines/TransformStep.h"
#include "amp/Support/Diagnostics.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::amp;

namespace {

[[noreturn]] void raise(const std::string &message) {
  throw nb::value_error(message.c_str());
}

std::unique_ptr<AmpPipelineOptions> parseOptions(const std::string &text) {
  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> options =
      parseAmpPipelineOptions(text);
  if (!options)
    raise(llvm::toString(options.takeError()));
  return std::move(*options);
}

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllAmpDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  // Errors become exception messages: the location says where, without the
  // whole module printed as a note, and in IR order.
  context->printOpOnDiagnostic(false);
  context->disableMultithreading();
  return context;
}

/// Parses `text` (named `name` in locations); errors become a ValueError.
OwningOpRef<ModuleOp> parse(MLIRContext &context, const std::string &text,
                            const std::string &name,
                            DiagnosticCollector &errors) {
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    raise("cannot parse " + name + ":\n" + errors.take());
  return module;
}

std::string print(Operation *op,
                  OpPrintingFlags flags = OpPrintingFlags()) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, flags);
  return text;
}

using Explanations =
    std::vector<std::tuple<std::string, std::string, std::string>>;

Explanations convert(const std::vector<Explanation> &explanations) {
  Explanations result;
  for (const Explanation &e : explanations)
    result.emplace_back(e.opName, printLocation(e.location), e.message);
  return result;
}

/// compile(): the transformed IR, the report, the explanations and the
/// warnings of the passes.
std::tuple<std::string, std::string, Explanations, std::string>
compileText(const std::string &text, const std::string &name,
            const std::string &optionText) {
  std::unique_ptr<AmpPipelineOptions> options = parseOptions(optionText);
  std::unique_ptr<MLIRContext> context = createContext();
  DiagnosticCollector errors(context.get());
  OwningOpRef<ModuleOp> module = parse(*context, text, name, errors);
  PipelineOutputs outputs;
  if (failed(transformStep(*module, options.get(), &outputs)))
    raise("the AMP pipeline failed on " + name + ":\n" + errors.take());
  return {print(*module), outputs.report, convert(outputs.explanations),
          errors.take()};
}

/// import_step(): amp-import-step on an imported step, printed in the
/// contract's form.
std::string importStepText(const std::string &text, const std::string &name) {
  std::unique_ptr<MLIRContext> context = createContext();
  DiagnosticCollector errors(context.get());
  OwningOpRef<ModuleOp> module = parse(*context, text, name, errors);
  PassManager pm(context.get());
  pm.addPass(createAmpImportStep());
  if (failed(pm.run(*module)))
    raise("amp-import-step failed on " + name + ":\n" + errors.take());
  // With locations: the front end's ones name each op's module and aten op.
  return print(*module,
               OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/false));
}

/// Every option's value (its default when not given), by option name.
nb::dict optionValues(const std::string &text) {
  std::unique_ptr<AmpPipelineOptions> options = parseOptions(text);
  nb::dict values;
#define GEN_PASS_PIPELINE_OPTION_LIST_AMPPIPELINE
#define PASS_PIPELINE_OPTION(field, argument)                                  \
  values[argument] = options->field.getValue();
#include "amp/Pipelines/AmpPipeline.h.inc"
  return values;
}

void validatePolicy(const std::string &presetOrPath) {
  llvm::Expected<Policy> policy = Policy::load(presetOrPath);
  if (!policy)
    raise(llvm::toString(policy.takeError()));
}

DType parseDType(const std::string &name) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I8, DType::I32, DType::I64, DType::Bool})
    if (getDTypeName(dtype) == name)
      return dtype;
  raise("unsupported dtype '" + name + "'");
}

HostArray makeArray(const std::string &dtype, const std::vector<int64_t> &shape,
                    const nb::bytes &data) {
  HostArray array(parseDType(dtype), shape);
  if (data.size() != array.getNumBytes())
    raise("expected " + std::to_string(array.getNumBytes()) + " bytes for " +
          describeArray(array.getDType(), shape) + ", got " +
          std::to_string(data.size()));
  std::memcpy(array.data(), data.c_str(), data.size());
  return array;
}

nb::bytes toBytes(const HostArray &array) {
  return nb::bytes(array.data(), array.getNumBytes());
}

using ArrayType = std::pair<std::string, std::vector<int64_t>>;

ArrayType getArrayType(const HostArray &array) {
  return {getDTypeName(array.getDType()).str(),
          std::vector<int64_t>(array.getShape().begin(),
                               array.getShape().end())};
}

/// A compiled step with its context, as amp_mlir.Session uses it.
class Step {
public:
  Step(const std::string &text, const std::string &name,
       std::optional<std::string> optionText, const std::string &function,
       const std::vector<std::string> &extraFunctions, const std::string &cpu,
       int threads, bool library, bool channelsLast, bool f32Operands)
      : context(createContext()) {
    if (optionText)
      options = parseOptions(*optionText);
    DiagnosticCollector errors(context.get());
    module = parse(*context, text, name, errors);
    StepCompileOptions compileOptions;
    compileOptions.amp = options.get();
    compileOptions.function = function;
    compileOptions.extraFunctions = extraFunctions;
    compileOptions.cpu = cpu;
    compileOptions.threads = threads;
    compileOptions.library = library;
    compileOptions.channelsLast = channelsLast;
    compileOptions.f32Operands = f32Operands;
    compileOptions.outputs = &outputs;
    llvm::Expected<std::unique_ptr<CompiledStep>> compiled =
        CompiledStep::compile(*module, compileOptions);
    if (!compiled) {
      std::string message = llvm::toString(compiled.takeError());
      std::string diagnostics = errors.take();
      raise(name + ": " + message +
            (diagnostics.empty() ? "" : ":\n" + diagnostics));
    }
    step = std::move(*compiled);
    warnings = errors.take();
  }

  /// (name, role, dtype, shape with -1 for a dynamic batch, state name,
  /// next result) per argument.
  std::vector<std::tuple<std::string, std::string, std::string,
                         std::vector<int64_t>, std::string,
                         std::optional<unsigned>>>
  getArguments() const {
    std::vector<std::tuple<std::string, std::string, std::string,
                           std::vector<int64_t>, std::string,
                           std::optional<unsigned>>>
        result;
    for (auto [argument, array] :
         llvm::zip_equal(step->getSignature().arguments, step->getArguments()))
      result.emplace_back(argument.name,
                          getArgumentRoleName(argument.role).str(),
                          getDTypeName(array.getDType()).str(),
                          getShape(argument.type), argument.stateName,
                          argument.nextResult);
    return result;
  }

  std::vector<ArrayType> getResults() const {
    std::vector<ArrayType> result;
    for (const HostArray &array : step->getResults())
      result.push_back(getArrayType(array));
    return result;
  }

  unsigned checkArgument(unsigned index) const {
    if (index >= step->getArguments().size())
      raise("no argument #" + std::to_string(index));
    return index;
  }

  nb::bytes getArgument(unsigned index) const {
    return toBytes(step->getArguments()[checkArgument(index)]);
  }

  void setArgument(unsigned index, const std::string &dtype,
                   const std::vector<int64_t> &shape, const nb::bytes &data) {
    if (llvm::Error error = step->setArgument(checkArgument(index),
                                              makeArray(dtype, shape, data)))
      raise(llvm::toString(std::move(error)));
  }

  nb::bytes getResult(unsigned index) const {
    if (index >= step->getResults().size())
      raise("no result #" + std::to_string(index));
    return toBytes(step->getResults()[index]);
  }

  /// (loss, scale, found_inf, milliseconds, temporary bytes) of a step.
  using Outcome = std::tuple<double, std::optional<double>, bool, double,
                             std::optional<uint64_t>>;

  Outcome run() {
    llvm::Expected<StepOutcome> outcome = step->run();
    if (!outcome)
      raise(llvm::toString(outcome.takeError()));
    return {outcome->loss, outcome->scale, outcome->foundInf,
            outcome->milliseconds, outcome->temporaryBytes};
  }

  /// The shape of `type`, -1 for a dynamic dimension.
  static std::vector<int64_t> getShape(RankedTensorType type) {
    std::vector<int64_t> shape;
    for (int64_t d : type.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return shape;
  }

  using ArrayData = std::tuple<std::string, std::vector<int64_t>, nb::bytes>;

  /// Runs `steps` steps (from step `first` of the run) on batches of
  /// `dataSets`, one per data argument, as amp-run does with its --data files:
  /// this rank's share of each in a data-parallel run, whose outcomes have
  /// the loss of the whole batch (the mean of the ranks'). With `saveEvery`
  /// > 0 it saves a checkpoint to `saveDir` after every `saveEvery` steps of
  /// the run and after the last.
  std::vector<Outcome> fit(const std::vector<ArrayData> &dataSets,
                           int64_t steps, int64_t epochs, int64_t first,
                           int64_t batchSize, bool keepLastBatch, bool shuffle,
                           uint64_t seed, int64_t saveEvery,
                           const std::string &saveDir) {
    std::vector<HostArray> arrays;
    std::vector<std::string> names;
    for (const auto &[dtype, shape, data] : dataSets) {
      names.push_back("data set #" + std::to_string(arrays.size()));
      arrays.push_back(makeArray(dtype, shape, data));
    }
    BatchOptions options;
    options.batchSize = batchSize;
    options.keepLastBatch = keepLastBatch;
    options.shuffle = shuffle;
    options.seed = seed;
    const MpiWorld *world = step->getWorld();
    if (world) {
      options.shard = world->getRank();
      options.numShards = world->getSize();
    }
    llvm::Expected<Batcher> batcher = Batcher::create(
        step->getSignature(), std::move(arrays), std::move(names), options);
    if (!batcher)
      raise(llvm::toString(batcher.takeError()));
    if (steps < 0)
      steps = epochs * batcher->getBatchesPerEpoch();
    std::vector<Outcome> outcomes;
    fitSteps = 0;
    for (int64_t s = first; s < first + steps; ++s) {
      // Ctrl-C (SIGINT) and other signals' Python handlers run between
      // steps; their exception ends the run, the steps done counted.
      if (PyErr_CheckSignals() != 0)
        throw nb::python_error();
      if (llvm::Error error = batcher->fill(s, *step))
        raise(llvm::toString(std::move(error)));
      Outcome outcome = run();
      if (world && world->getSize() > 1)
        std::get<0>(outcome) =
            world->sum(std::get<0>(outcome)) / world->getSize();
      outcomes.push_back(outcome);
      ++fitSteps;
      // Rank 0 alone writes the state every rank holds.
      if (saveEvery > 0 && (!world || world->getRank() == 0) &&
          ((s + 1) % saveEvery == 0 || s + 1 == first + steps))
        saveCheckpoint(saveDir, s + 1, seed);
    }
    return outcomes;
  }

  double accuracy(const std::string &function, const ArrayData &inputs,
                  const ArrayData &labels, int64_t batchSize) {
    LabeledData data;
    data.inputs = makeArray(std::get<0>(inputs), std::get<1>(inputs),
                            std::get<2>(inputs));
    data.labels = makeArray(std::get<0>(labels), std::get<1>(labels),
                            std::get<2>(labels));
    llvm::Expected<double> result =
        evaluateAccuracy(*step, function, data, batchSize);
    if (!result)
      raise(llvm::toString(result.takeError()));
    return *result;
  }

  static std::vector<ArrayType> convertTypes(const std::string &name,
                                             TypeRange types) {
    std::vector<ArrayType> result;
    for (Type type : types) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      std::optional<DType> dtype =
          tensor ? getDType(tensor.getElementType()) : std::nullopt;
      if (!tensor || !dtype ||
          llvm::any_of(tensor.getShape().drop_front(), ShapedType::isDynamic))
        raise("@" + name + " has a value that is not a tensor of static "
                           "shape but for a dynamic batch dimension");
      result.push_back({getDTypeName(*dtype).str(), getShape(tensor)});
    }
    return result;
  }

  FunctionType getFunctionType(const std::string &name) const {
    FunctionType type = step->getFunctionType(name);
    if (!type)
      raise("@" + name + " was not compiled with the step");
    return type;
  }

  /// (argument types, result types) of an extra function.
  std::pair<std::vector<ArrayType>, std::vector<ArrayType>>
  getFunctionTypes(const std::string &name) const {
    FunctionType type = getFunctionType(name);
    return {convertTypes(name, type.getInputs()),
            convertTypes(name, type.getResults())};
  }

  /// Calls an extra function on its arguments; returns its results.
  std::vector<nb::bytes>
  call(const std::string &name,
       const std::vector<std::tuple<std::string, std::vector<int64_t>,
                                    nb::bytes>> &inputs) {
    auto [argumentTypes, resultTypes] = getFunctionTypes(name);
    if (inputs.size() != argumentTypes.size())
      raise("@" + name + " takes " + std::to_string(argumentTypes.size()) +
            " argument(s), got " + std::to_string(inputs.size()));
    std::vector<HostArray> arrays;
    // Results of a dynamic batch take the inputs' batch size.
    int64_t batch = 0;
    for (const auto &[index, input] : llvm::enumerate(inputs)) {
      const auto &[dtype, shape, data] = input;
      arrays.push_back(makeArray(dtype, shape, data));
      if (!argumentTypes[index].second.empty() &&
          argumentTypes[index].second[0] < 0)
        batch = shape[0];
    }
    for (auto [dtype, shape] : resultTypes) {
      if (!shape.empty() && shape[0] < 0)
        shape[0] = batch;
      arrays.emplace_back(parseDType(dtype), shape);
    }
    llvm::SmallVector<HostArray *> pointers;
    for (HostArray &array : arrays)
      pointers.push_back(&array);
    if (llvm::Error error = step->call(name, pointers))
      raise(llvm::toString(std::move(error)));
    std::vector<nb::bytes> results;
    for (size_t i = inputs.size(); i < arrays.size(); ++i)
      results.push_back(toBytes(arrays[i]));
    return results;
  }

  void saveCheckpoint(const std::string &dir, int64_t stepsDone,
                      uint64_t seed) const {
    if (llvm::Error error =
            amp::saveCheckpoint(dir, *step, {stepsDone, seed}))
      raise(llvm::toString(std::move(error)));
  }

  /// (steps done, seed) of the checkpoint loaded.
  std::pair<int64_t, uint64_t> loadCheckpoint(const std::string &dir) {
    llvm::Expected<RunPosition> position = amp::loadCheckpoint(dir, *step);
    if (!position)
      raise(llvm::toString(position.takeError()));
    return {position->stepsDone, position->seed};
  }

  /// The steps the last (or current) fit ran, also when it raised.
  int64_t fitSteps = 0;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<AmpPipelineOptions> options;
  OwningOpRef<ModuleOp> module;
  PipelineOutputs outputs;
  /// The warnings of the passes, as compiling left them.
  std::string warnings;
  std::unique_ptr<CompiledStep> step;
};

} // namespace

NB_MODULE(_amp_mlir, m) {
  m.doc() = "Native part of amp_mlir (use the amp_mlir package)";
  m.def("compile", &compileText, nb::arg("text"), nb::arg("name"),
        nb::arg("options"));
  m.def("option_values", &optionValues, nb::arg("options"));
  m.def("import_step", &importStepText, nb::arg("text"), nb::arg("name"));
  m.def("validate_policy", &validatePolicy, nb::arg("preset_or_path"));
  m.def("presets", [] {
    std::vector<std::string> names;
    for (const PresetInfo &preset : getPresets())
      names.push_back(preset.name.str());
    return names;
  });
  nb::class_<Step>(m, "Step")
      .def(nb::init<const std::string &, const std::string &,
                    std::optional<std::string>, const std::string &,
                    const std::vector<std::string> &, const std::string &, int,
                    bool, bool, bool>(),
           nb::arg("text"), nb::arg("name"), nb::arg("options").none(),
           nb::arg("function"), nb::arg("extra_functions"), nb::arg("cpu"),
           nb::arg("threads"), nb::arg("library"), nb::arg("channels_last"),
           nb::arg("f32_operands"))
      .def_prop_ro("name", [](const Step &s) { return s.step->getName().str(); })
      .def_prop_ro("arguments", &Step::getArguments)
      .def_prop_ro("results", &Step::getResults)
      .def_prop_ro("loss_result",
                   [](const Step &s) { return s.step->getSignature().lossResult; })
      .def_prop_ro("found_inf_result",
                   [](const Step &s) {
                     return s.step->getSignature().foundInfResult;
                   })
      .def_prop_ro("compile_seconds",
                   [](const Step &s) { return s.step->getCompileSeconds(); })
      .def_prop_ro("rank",
                   [](const Step &s) {
                     const MpiWorld *world = s.step->getWorld();
                     return world ? world->getRank() : 0;
                   })
      .def_prop_ro("world_size",
                   [](const Step &s) {
                     const MpiWorld *world = s.step->getWorld();
                     return world ? world->getSize() : 1;
                   })
      .def("check_replicas",
           [](const Step &s) {
             if (llvm::Error error = s.step->checkReplicas())
               raise(llvm::toString(std::move(error)));
           })
      .def_prop_ro("report", [](const Step &s) { return s.outputs.report; })
      .def_prop_ro("warnings", [](const Step &s) { return s.warnings; })
      .def_prop_ro("explanations",
                   [](const Step &s) { return convert(s.outputs.explanations); })
      .def("initialize",
           [](Step &s, uint64_t seed) { s.step->initializeState(seed); },
           nb::arg("seed"))
      .def("get_argument", &Step::getArgument)
      .def("argument_shape",
           [](const Step &s, unsigned index) {
             return getArrayType(s.step->getArguments()[s.checkArgument(index)])
                 .second;
           })
      .def("set_argument", &Step::setArgument)
      .def("get_result", &Step::getResult)
      .def("run", &Step::run)
      .def("fit", &Step::fit)
      .def_ro("fit_steps", &Step::fitSteps)
      .def("accuracy", &Step::accuracy)
      .def("function_types", &Step::getFunctionTypes)
      .def("call", &Step::call)
      .def("save_checkpoint", &Step::saveCheckpoint)
      .def("load_checkpoint", &Step::loadCheckpoint);
}
