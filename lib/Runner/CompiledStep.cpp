//===- CompiledStep.cpp - A training step JIT-compiled for the CPU --------===//

#include "amp/Runner/CompiledStep.h"
#include "amp/ExecutionEngine/CpuRuntime.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Pipelines/CPULowering.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;

std::optional<DType> amp::getDType(Type type) {
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

std::string amp::describeArray(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string text = getDTypeName(dtype).str() + "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text + "]";
}

uint64_t Random::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Random::normal() {
  double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Random amp::makeRandom(uint64_t seed, RandomStream stream, uint64_t index) {
  Random mix(seed ^ (static_cast<uint64_t>(stream) << 56) ^
             (index * 0x632be59bd9b4e019ULL));
  return Random(mix.next());
}

void amp::initializeArray(HostArray &array, const Initializer &init,
                          uint64_t seed, unsigned index) {
  Random random = makeRandom(seed, RandomStream::Init, index);
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

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The host's target machine, or that of `cpu` on the host's triple.
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(StringRef cpu) {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  if (cpu.empty())
    return builder->createTargetMachine();
  const llvm::Triple &triple = builder->getTargetTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError(error);
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!info->isCPUStringValid(cpu))
    return makeError("no target machine for CPU '" + cpu + "': not a CPU of " +
                     triple.str());
  llvm::orc::JITTargetMachineBuilder chosen(triple);
  chosen.setCPU(cpu.str());
  return chosen.createTargetMachine();
}

/// Whether `machine` rounds f32 to bf16 in one instruction. Elsewhere LLVM
/// calls __truncsfbf2 for every element of a vector (16 calls for 16 lanes
/// on an AVX2 host), which made the bf16 steps slower than the fp32 ones and
/// tripled their compile time (bench/RESULTS.md, "Fourteenth round").
static bool hasBF16Rounding(const llvm::TargetMachine &machine) {
  if (!machine.getTargetTriple().isX86())
    return true;
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  return info->checkFeatures("+avx512bf16,+avx512vl") ||
         info->checkFeatures("+avxneconvert");
}

/// Loads and stores `<N x i16>` where `module` loads or stores `<N x
/// bfloat>`, with bitcasts to and from the bf16 vector. Without AVX512-BF16,
/// x86's instruction selection splits a bf16 vector in memory into its
/// elements (a 16-lane copy became 32 scalar moves), which took seconds to
/// schedule and made the bf16 steps slower than the fp32 ones; i16 vectors
/// are legal. Runs after LLVM's optimizations, whose instcombine would fold
/// the bitcasts back into the memory accesses.
static void moveBF16VectorsAsIntegers(llvm::Module &module) {
  auto integerVector = [](llvm::Type *type) -> llvm::VectorType * {
    auto *vector = llvm::dyn_cast<llvm::VectorType>(type);
    if (!vector || !vector->getElementType()->isBFloatTy())
      return nullptr;
    return llvm::VectorType::get(
        llvm::Type::getInt16Ty(type->getContext()), vector);
  };
  llvm::SmallVector<llvm::Instruction *> accesses;
  for (llvm::Function &function : module)
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction);
          load && integerVector(load->getType()))
        accesses.push_back(load);
      else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&instruction);
               store && integerVector(store->getValueOperand()->getType()))
        accesses.push_back(store);
  for (llvm::Instruction *access : accesses) {
    llvm::IRBuilder<> builder(access);
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(access)) {
      llvm::LoadInst *bits =
          builder.CreateAlignedLoad(integerVector(load->getType()),
                                    load->getPointerOperand(), load->getAlign());
      bits->copyMetadata(*load);
      load->replaceAllUsesWith(builder.CreateBitCast(bits, load->getType()));
      load->eraseFromParent();
      continue;
    }
    auto *store = llvm::cast<llvm::StoreInst>(access);
    llvm::Value *value = store->getValueOperand();
    store->setOperand(0, builder.CreateBitCast(
                             value, integerVector(value->getType())));
  }
}

/// Turns off the merging of consecutive stores in LLVM's instruction
/// selection (a process-wide LLVM option: target machines have no setting
/// of their own). amp-cpu-vectorize leaves vector loads and stores, which it
/// cannot widen, and its search for partners took half of the JIT compile
/// time of the benchmark's CNN and GPT steps (bench/RESULTS.md, "Ninth
/// round").
static void disableStoreMerging() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("combiner-store-merging");
    if (it != options.end())
      it->second->addOccurrence(0, it->first, "false");
  });
}

/// Calls a function lowered by amp-lower-to-llvm through its C interface:
/// every argument and (out-parameter) result an identity-layout memref.
/// `threads` is set for each call, since the CPU runtime's thread count is
/// per calling thread and steps of one process may differ in it.
static llvm::Error callPacked(void (*function)(void **),
                              llvm::ArrayRef<HostArray *> arrays,
                              int threads) {
  ampCpuSetNumThreads(threads);
  // Descriptor: base, data, offset, sizes[rank], strides[rank].
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>> descriptors;
  for (HostArray *array : arrays) {
    auto &d = descriptors.emplace_back();
    auto pointer = reinterpret_cast<int64_t>(array->data());
    d.append({pointer, pointer, 0});
    llvm::ArrayRef<int64_t> shape = array->getShape();
    d.append(shape.begin(), shape.end());
    llvm::SmallVector<int64_t> strides(shape.size());
    int64_t stride = 1;
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
  if (const char *error = ampCpuTakeError())
    return makeError(llvm::Twine("a library call failed: ") + error);
  return llvm::Error::success();
}

/// Whether `type` is static but for a dynamic dimension 0, the batch.
static bool hasBatchOnlyDynamic(RankedTensorType type) {
  return type.getRank() > 0 && type.isDynamicDim(0) &&
         llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
}

/// A host buffer for a value of `type`: a tensor of a supported element type,
/// static or, with `dynamicBatch`, dynamic in dimension 0 alone, which is
/// then sized `batch`.
static llvm::Expected<HostArray> makeBuffer(Type type, const llvm::Twine &what,
                                            bool dynamicBatch = false,
                                            int64_t batch = 0) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<DType> dtype =
      tensor ? getDType(tensor.getElementType()) : std::nullopt;
  if (!tensor || !dtype ||
      !(tensor.hasStaticShape() ||
        (dynamicBatch && hasBatchOnlyDynamic(tensor))))
    return makeError(what + " is not a tensor of f32, f64, f16, bf16, i1, i8, "
                            "i32 or i64 of static shape" +
                     (dynamicBatch ? " but for the batch dimension" : ""));
  llvm::SmallVector<int64_t> shape(tensor.getShape());
  if (!shape.empty() && ShapedType::isDynamic(shape[0]))
    shape[0] = batch;
  return HostArray(*dtype, shape);
}

llvm::Expected<std::unique_ptr<CompiledStep>>
CompiledStep::compile(ModuleOp module, const StepCompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  MLIRContext *context = module.getContext();
  if (options.threads < 1)
    return makeError("threads=" + llvm::Twine(options.threads) +
                     ": expected a positive number of threads");
  std::unique_ptr<CompiledStep> step(new CompiledStep());

  // What the runner reads from the IR, before the markers go away.
  FailureOr<func::FuncOp> stepFunction =
      findStepFunction(module, options.function);
  if (failed(stepFunction))
    return makeError("no step function to run");
  FailureOr<StepSignature> signature = readStepSignature(*stepFunction);
  if (failed(signature))
    return makeError("the step cannot be run (see the error above)");
  step->signature = std::move(*signature);
  StringRef name = step->signature.functionName;
  if (options.amp) {
    step->initScale = options.amp->initScale;
    step->hysteresis = options.amp->hysteresis;
  }
  // A data-parallel step joins the MPI job; any other refuses one of
  // several processes, where every rank would train on its own.
  if (options.amp && isDataParallel(*options.amp)) {
    llvm::Expected<MpiWorld *> world = MpiWorld::get();
    if (!world)
      return makeError("data-parallel=mpi: " +
                       llvm::toString(world.takeError()));
    step->world = *world;
  } else if (LaunchedWorld launched = getLaunchedWorld(); launched.size > 1) {
    return makeError(
        "this process is rank " + llvm::Twine(launched.rank) + " of " +
        llvm::Twine(launched.size) +
        " in an MPI job, but the step is not data-parallel: every rank would "
        "train on its own; add data-parallel=mpi to the AMP options "
        "(level=O0 data-parallel=mpi for fp32) or run one process");
  }

  if (failed(transformStep(module, options.amp, options.outputs)))
    return makeError(options.amp ? "the AMP pipeline failed"
                                 : "amp-strip-markers failed");
  auto transformed = module.lookupSymbol<func::FuncOp>(name);
  if (failed(addScalerState(step->signature, transformed)))
    return makeError("the AMP pipeline broke the step's signature");
  for (StringRef extra : options.extraFunctions) {
    auto function = module.lookupSymbol<func::FuncOp>(extra);
    if (!function || function.isExternal())
      return makeError("no function @" + extra + " with a body");
    function->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
    step->extraFunctions[extra].type = function.getFunctionType();
  }
  transformed->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  // Buffers, from the signatures as tensors (lowering erases them). Those
  // with a dynamic batch are sized at each call.
  bool dynamicBatch = step->signature.dynamicBatch;
  for (auto [index, argument] : llvm::enumerate(step->signature.arguments)) {
    llvm::Expected<HostArray> buffer = makeBuffer(
        argument.type, "argument #" + llvm::Twine(index), dynamicBatch);
    if (!buffer)
      return buffer.takeError();
    step->arguments.push_back(std::move(*buffer));
    if (argument.nextResult)
      step->carried.push_back(index);
  }
  for (auto [index, type] : llvm::enumerate(transformed.getResultTypes())) {
    llvm::Expected<HostArray> buffer = makeBuffer(
        type, "result #" + llvm::Twine(index) + " of @" + name, dynamicBatch);
    if (!buffer)
      return buffer.takeError();
    step->resultTypes.push_back(cast<RankedTensorType>(type));
    step->results.push_back(std::move(*buffer));
  }

  PassManager lowering(context);
  std::string pipelineError;
  llvm::raw_string_ostream pipelineErrorStream(pipelineError);
  // `lowering` runs on the module already: an anchored pipeline, as written
  // for amp-opt, would look for modules inside it and run nothing.
  StringRef beforeLowering = options.beforeLowering;
  if (beforeLowering.consume_front("builtin.module("))
    beforeLowering.consume_back(")");
  if (failed(parsePassPipeline(beforeLowering, lowering, pipelineErrorStream)))
    return makeError("the passes to run before lowering, '" +
                     options.beforeLowering + "': " + pipelineError);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      createTargetMachine(options.cpu);
  if (!targetMachine)
    return targetMachine.takeError();
  CPULoweringOptions loweringOptions;
  loweringOptions.nativeBF16 = hasBF16Rounding(**targetMachine);
  // The runtime that will run the step says which low-precision products it
  // computes in f32 on this host.
  if (options.f32Operands) {
    for (auto [type, isF16] : {std::pair{"bf16", 0}, std::pair{"f16", 1}}) {
      if (StringRef(ampCpuLowPrecisionPath(isF16)) == "f32")
        loweringOptions.f32MatmulTypes.push_back(type);
      if (StringRef(ampCpuConv2DLowPrecisionPath(isF16)) == "f32")
        loweringOptions.f32ConvolutionTypes.push_back(type);
    }
  }
  loweringOptions.vectorize = options.vectorize;
  loweringOptions.library = options.library;
  loweringOptions.threads = options.threads;
  loweringOptions.channelsLast = options.channelsLast;
  buildCPULoweringPipeline(lowering, loweringOptions);
  if (failed(lowering.run(module)))
    return makeError("lowering the step to LLVM failed");

  disableStoreMerging();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  // The C runner utils define __truncsfbf2, for the bf16 roundings LLVM
  // still lowers to calls (from f64, or not to nearest even, which
  // amp-cpu-round-to-bf16 leaves); the library calls need the CPU runtime.
  std::string cpuRuntime = getRuntimeLibraryPath("libAmpCpuRuntime.so");
  llvm::SmallVector<StringRef> libraries = {AMP_C_RUNNER_UTILS, cpuRuntime};
  if (step->world)
    libraries.push_back(step->world->getRuntimePath());
  // ExecutionEngineOptions keeps a function_ref: the transformer must live
  // until create() returns. LLVM's -O1: the loops arrive tiled and
  // vectorized; -O3 and -O2 took longer to compile (GPT 3.3 and 2.8 s, 2.55
  // at -O1) for steps no faster (bench/RESULTS.md, "Third round" and
  // "Fifth round").
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(1, 0, targetMachine->get());
  bool nativeBF16 = loweringOptions.nativeBF16;
  std::function<llvm::Error(llvm::Module *)> transformer =
      [&](llvm::Module *llvmModule) -> llvm::Error {
        if (llvm::Error error = optimize(llvmModule))
          return error;
        if (!nativeBF16)
          moveBF16VectorsAsIntegers(*llvmModule);
        return llvm::Error::success();
      };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  // LLVM's perf listener writes a jitdump file for every compiled step; only
  // where the user asks for them (JITDUMPDIR, the directory `perf inject
  // --jit` reads them from), not into every embedding process's home.
  engineOptions.enablePerfNotificationListener =
      std::getenv("JITDUMPDIR") != nullptr;
  engineOptions.sharedLibPaths = libraries;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(module, engineOptions, std::move(*targetMachine));
  if (!engine)
    return makeError("JIT compilation failed: " +
                     llvm::toString(engine.takeError()));
  step->engine = std::move(*engine);
  auto lookup = [&](StringRef function) {
    return step->engine->lookupPacked(("_mlir_ciface_" + function).str());
  };
  llvm::Expected<void (*)(void **)> function = lookup(name);
  if (!function)
    return makeError("JIT compilation failed: " +
                     llvm::toString(function.takeError()));
  step->stepFunction = *function;
  for (auto &entry : step->extraFunctions) {
    llvm::Expected<void (*)(void **)> extra = lookup(entry.getKey());
    if (!extra)
      return makeError("JIT compilation failed: " +
                       llvm::toString(extra.takeError()));
    entry.getValue().function = *extra;
  }
  step->isSet.resize(step->arguments.size());
  step->threads = options.threads;
  step->library = options.library;
  step->initializeState(0);
  step->compileSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return std::move(step);
}

CompiledStep::~CompiledStep() = default;

void CompiledStep::initializeState(uint64_t seed) {
  failure.clear();
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    HostArray &array = arguments[index];
    switch (argument.role) {
    case ArgumentRole::Parameter:
    case ArgumentRole::OptimizerState:
    case ArgumentRole::Buffer:
      initializeArray(array, argument.init, seed, index);
      break;
    case ArgumentRole::ScalerState: {
      double start =
          getInitialScalerState(argument.stateName, initScale, hysteresis);
      for (int64_t i = 0; i < array.getNumElements(); ++i)
        array.setFromDouble(i, start);
      break;
    }
    case ArgumentRole::Hyperparameter:
      for (int64_t i = 0; i < array.getNumElements(); ++i)
        array.setFromDouble(i, argument.value.value_or(0.0));
      break;
    case ArgumentRole::Data:
      break;
    }
    isSet[index] = argument.role != ArgumentRole::Hyperparameter ||
                   argument.value.has_value();
  }
}

std::string amp::describeType(DType dtype, RankedTensorType type) {
  std::string text = getDTypeName(dtype).str() + "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(type.getShape(), os,
                   [&](int64_t d) {
                     if (ShapedType::isDynamic(d))
                       os << "?";
                     else
                       os << d;
                   },
                   "x");
  return text + "]";
}

llvm::Error CompiledStep::checkArgument(unsigned index,
                                        const HostArray &array) const {
  const StepArgument &argument = signature.arguments[index];
  const HostArray &target = arguments[index];
  llvm::ArrayRef<int64_t> shape = array.getShape();
  bool fits = array.getDType() == target.getDType() &&
              shape.size() == target.getShape().size();
  for (auto [size, expected] : llvm::zip(shape, argument.type.getShape()))
    fits &= ShapedType::isDynamic(expected) ? size > 0 : size == expected;
  if (!fits)
    return makeError("argument '" + argument.name + "' (#" +
                     llvm::Twine(index) + ") of @" + getName() + " is " +
                     describeType(target.getDType(), argument.type) +
                     ", got " +
                     describeArray(array.getDType(), array.getShape()));
  return llvm::Error::success();
}

llvm::Error CompiledStep::setArgument(unsigned index, HostArray array) {
  if (llvm::Error error = checkArgument(index, array))
    return error;
  arguments[index] = std::move(array);
  isSet[index] = true;
  return llvm::Error::success();
}

llvm::Expected<int64_t> CompiledStep::getBatchSize() const {
  if (!signature.dynamicBatch)
    return 0;
  std::optional<unsigned> first;
  for (unsigned index : signature.getArguments(ArgumentRole::Data)) {
    int64_t rows = arguments[index].getShape()[0];
    if (rows == 0)
      return makeError("data argument '" + signature.arguments[index].name +
                       "' of @" + getName() + " has not been set");
    if (!first) {
      first = index;
      continue;
    }
    int64_t expected = arguments[*first].getShape()[0];
    if (rows != expected)
      return makeError("data arguments '" + signature.arguments[*first].name +
                       "' and '" + signature.arguments[index].name + "' of @" +
                       getName() + " hold batches of " +
                       llvm::Twine(expected) + " and " + llvm::Twine(rows) +
                       " rows; a step takes one batch size");
  }
  return first ? arguments[*first].getShape()[0] : 0;
}

/// The mean of the elements of `array` (the loss is usually 0-d).
static double mean(const HostArray &array) {
  double sum = 0.0;
  for (int64_t i = 0, e = array.getNumElements(); i < e; ++i)
    sum += array.getAsDouble(i);
  return sum / std::max<int64_t>(1, array.getNumElements());
}

llvm::Expected<StepOutcome> CompiledStep::run() {
  if (!failure.empty())
    return makeError("@" + getName() + " failed in an earlier step (" +
                     failure +
                     "), which left its parameters and optimizer state "
                     "undefined: initialize the state again (a new Session) "
                     "to go on");
  for (unsigned index : signature.getArguments(ArgumentRole::Hyperparameter))
    if (!isSet[index])
      return makeError("hyperparameter '" + signature.arguments[index].name +
                       "' of @" + getName() +
                       " has no amp.value and has not been set");
  llvm::Expected<int64_t> batch = getBatchSize();
  if (!batch)
    return batch.takeError();
  // Results of a dynamic batch are sized for this one.
  for (auto [array, type] : llvm::zip_equal(results, resultTypes)) {
    if (type.hasStaticShape() || array.getShape()[0] == *batch)
      continue;
    llvm::Expected<HostArray> sized =
        makeBuffer(type, "a result", /*dynamicBatch=*/true, *batch);
    if (!sized)
      return sized.takeError();
    array = std::move(*sized);
  }
  std::optional<double> scale;
  if (std::optional<unsigned> scaleArg =
          signature.getScalerArgument(kScaleStateName))
    scale = arguments[*scaleArg].getAsDouble(0);
  llvm::SmallVector<HostArray *> buffers;
  for (HostArray &array : arguments)
    buffers.push_back(&array);
  for (HostArray &array : results)
    buffers.push_back(&array);
  auto start = std::chrono::steady_clock::now();
  uint64_t allocated = ampCpuAllocatedBytes();
  if (llvm::Error error = callPacked(stepFunction, buffers, threads)) {
    failure = llvm::toString(std::move(error));
    return makeError("@" + getName() + ": " + failure);
  }
  std::optional<uint64_t> temporaryBytes;
  if (library)
    temporaryBytes = ampCpuAllocatedBytes() - allocated;
  double milliseconds = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  for (unsigned index : carried)
    std::swap(arguments[index], results[*signature.arguments[index].nextResult]);
  bool foundInf = signature.foundInfResult &&
                  results[*signature.foundInfResult].getAsDouble(0) != 0.0;
  return StepOutcome{mean(results[signature.lossResult]), scale, foundInf,
                     milliseconds, temporaryBytes};
}

uint64_t CompiledStep::hashReplicatedState() const {
  auto hash = [](const HostArray &array) {
    return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(array.data()), array.getNumBytes()));
  };
  llvm::SmallVector<uint64_t> parts;
  for (unsigned index : carried)
    if (signature.arguments[index].role != ArgumentRole::Buffer)
      parts.push_back(hash(arguments[index]));
  if (signature.foundInfResult)
    parts.push_back(hash(results[*signature.foundInfResult]));
  return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(parts.data()),
      parts.size() * sizeof(uint64_t)));
}

llvm::Error CompiledStep::checkReplicas() const {
  if (!world)
    return llvm::Error::success();
  std::vector<uint64_t> hashes = world->gather(hashReplicatedState());
  std::string differing;
  for (auto [rank, hash] : llvm::enumerate(hashes))
    if (hash != hashes.front())
      differing += (differing.empty() ? "" : ", ") + std::to_string(rank);
  if (differing.empty())
    return llvm::Error::success();
  return makeError("the replicas differ: the parameters, optimizer and "
                   "scaler state of rank(s) " +
                   differing +
                   " are not rank 0's; every rank must run the same step "
                   "with the same options, seed and starting state");
}

FunctionType CompiledStep::getFunctionType(StringRef name) const {
  auto it = extraFunctions.find(name);
  return it == extraFunctions.end() ? FunctionType() : it->getValue().type;
}

llvm::Error CompiledStep::call(StringRef name,
                               llvm::ArrayRef<HostArray *> arrays) {
  auto it = extraFunctions.find(name);
  if (it == extraFunctions.end())
    return makeError("@" + name + " was not compiled with the step");
  FunctionType functionType = it->getValue().type;
  llvm::SmallVector<Type> types(functionType.getInputs());
  llvm::append_range(types, functionType.getResults());
  if (arrays.size() != types.size())
    return makeError("@" + name + " takes " + llvm::Twine(types.size()) +
                     " arguments and results, got " +
                     llvm::Twine(arrays.size()));
  // One size for the dynamic dimensions 0 of arguments and results.
  std::optional<int64_t> batch;
  for (auto [index, array, type] : llvm::enumerate(arrays, types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    bool fits = tensor &&
                getDType(tensor.getElementType()) == array->getDType() &&
                tensor.getRank() == int64_t(array->getShape().size());
    for (auto [d, size] : llvm::enumerate(array->getShape())) {
      if (!fits)
        break;
      int64_t expected = tensor.getDimSize(d);
      if (!ShapedType::isDynamic(expected)) {
        fits = size == expected;
      } else if (d == 0) {
        fits = size > 0 && (!batch || *batch == size);
        batch = size;
      } else {
        fits = false;
      }
    }
    if (fits)
      continue;
    std::string expected;
    llvm::raw_string_ostream os(expected);
    os << type;
    return makeError("value #" + llvm::Twine(index) + " of @" + name +
                     " is of type " + expected + ", got " +
                     describeArray(array->getDType(), array->getShape()));
  }
  if (llvm::Error error = callPacked(it->getValue().function, arrays, threads))
    return makeError("@" + name + ": " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}
