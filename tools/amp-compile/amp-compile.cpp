//===- amp-compile.cpp - Compile a training step for the GPU ahead of time ===//
//
// Turns a training step (docs/TrainingStepIR.md) into an object file that
// runs on an NVIDIA GPU without MLIR: the AMP pipeline (or the fp32 step
// without --amp), amp-lower-to-nvvm, and an `AmpCompiledStep` (the C ABI of
// runtime/include/amp/Runtime/AmpStepABI.h, included here for its
// constants) with a table of every buffer of the step and an entry point
// that calls it. Link the object with libamp_runtime.so; docs/GPU.md has
// the details.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Pipelines/GPULowering.h"
#include "amp/Runtime/AmpStepABI.h"
#include "amp/Step/StepSignature.h"
#include "StepToolOptions.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <cstddef>

using namespace mlir;
using namespace mlir::amp;

namespace cl = llvm::cl;

static cl::OptionCategory compileCategory("amp-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<step.mlir>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string> outputFile("o", cl::Required,
                                       cl::desc("Output file"),
                                       cl::value_desc("step.o"),
                                       cl::cat(compileCategory));
static StepToolOptions stepOptions(compileCategory);
static cl::opt<std::string>
    chip("chip", cl::desc("Target GPU, as amp-lower-to-nvvm's chip"),
         cl::init("sm_90"), cl::cat(compileCategory));
static cl::opt<bool> matmulF32("matmul-f32",
                               cl::desc("Also run f32 contractions through "
                                        "cuBLASLt"),
                               cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string>
    symbol("symbol", cl::desc("Name of the AmpCompiledStep the object defines"),
           cl::init("amp_compiled_step"), cl::cat(compileCategory));
enum class Emit { Object, LLVMIR, MLIR };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Object),
    cl::values(clEnumValN(Emit::Object, "obj", "a relocatable object (PIC)"),
               clEnumValN(Emit::LLVMIR, "llvm", "LLVM IR text"),
               clEnumValN(Emit::MLIR, "mlir", "the LLVM dialect module")),
    cl::cat(compileCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "amp-compile") << message << "\n";
  return 1;
}

namespace {
/// One entry of the step's AmpStepBuffer table.
struct TableEntry {
  std::string name;
  AmpBufferRole role;
  AmpElementType elementType;
  /// AMP_STEP_DYNAMIC_DIM for the batch.
  SmallVector<int64_t> shape;
  AmpInitKind initKind = AMP_INIT_NONE;
  double initValue = 0.0;
  int32_t feeds = -1;
};
} // namespace

static std::optional<AmpElementType> getElementType(Type type) {
  if (type.isF32())
    return AMP_ELEMENT_F32;
  if (type.isF16())
    return AMP_ELEMENT_F16;
  if (type.isBF16())
    return AMP_ELEMENT_BF16;
  if (type.isF64())
    return AMP_ELEMENT_F64;
  if (type.isInteger(1))
    return AMP_ELEMENT_I1;
  if (type.isInteger(32))
    return AMP_ELEMENT_I32;
  if (type.isInteger(64))
    return AMP_ELEMENT_I64;
  return std::nullopt;
}

static AmpInitKind getInitKind(const Initializer &init) {
  switch (init.kind) {
  case Initializer::Kind::Zeros:
    return AMP_INIT_ZEROS;
  case Initializer::Kind::Ones:
    return AMP_INIT_ONES;
  case Initializer::Kind::Glorot:
    return AMP_INIT_GLOROT;
  case Initializer::Kind::Normal:
    return AMP_INIT_NORMAL;
  }
  llvm_unreachable("unknown initializer");
}

/// The table of every buffer of `step` (the step after the AMP pipeline):
/// its arguments, then its results, which the lowering turns into trailing
/// out-parameters.
static FailureOr<SmallVector<TableEntry>>
buildBufferTable(func::FuncOp step, const StepSignature &signature,
                 const AmpPipelineOptions *options) {
  SmallVector<TableEntry> table;
  // Dimension 0 of data arguments and results may be the batch.
  auto add = [&](StringRef kind, AmpBufferRole role, const Twine &name,
                 Type type, Location loc) -> FailureOr<TableEntry *> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<AmpElementType> element =
        tensor ? getElementType(tensor.getElementType()) : std::nullopt;
    if (!tensor || !element)
      return emitError(loc) << "amp-compile: " << kind << " '" << name
                            << "' has type " << type
                            << "; compiled steps take ranked tensors of f32, "
                               "f16, bf16, f64, i1, i32, i64";
    bool batchSized = signature.dynamicBatch &&
                      (role == AMP_BUFFER_DATA ||
                       (kind == "result" && role != AMP_BUFFER_NEW_STATE));
    TableEntry &entry = table.emplace_back();
    entry.name = name.str();
    entry.role = role;
    entry.elementType = *element;
    for (auto [k, size] : llvm::enumerate(tensor.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        entry.shape.push_back(size);
        continue;
      }
      if (k != 0 || !batchSized)
        return emitError(loc)
               << "amp-compile: " << kind << " '" << name << "' has type "
               << type
               << "; only dimension 0 of data arguments and results may be "
                  "dynamic (the batch size, given at each call), in a step "
                  "whose data arguments have a dynamic batch dimension";
      entry.shape.push_back(AMP_STEP_DYNAMIC_DIM);
    }
    return &entry;
  };

  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    Location loc = step.getArgument(index).getLoc();
    Type type = step.getArgumentTypes()[index];
    FailureOr<TableEntry *> entry = failure();
    switch (argument.role) {
    case ArgumentRole::Parameter:
    case ArgumentRole::OptimizerState:
    case ArgumentRole::Buffer:
      entry = add("argument",
                  argument.role == ArgumentRole::Parameter ? AMP_BUFFER_PARAM
                  : argument.role == ArgumentRole::Buffer
                      ? AMP_BUFFER_FORWARD_STATE
                      : AMP_BUFFER_OPTIMIZER_STATE,
                  argument.name, type, loc);
      if (succeeded(entry)) {
        (*entry)->initKind = getInitKind(argument.init);
        if (argument.init.kind == Initializer::Kind::Normal)
          (*entry)->initValue = argument.init.stddev;
      }
      break;
    case ArgumentRole::Hyperparameter:
      if (!argument.value)
        return emitError(loc)
               << "amp-compile: hyperparameter '" << argument.name
               << "' needs an 'amp.value' to start the compiled step at";
      entry = add("argument", AMP_BUFFER_HYPERPARAMETER, argument.name, type,
                  loc);
      if (succeeded(entry)) {
        (*entry)->initKind = AMP_INIT_CONSTANT;
        (*entry)->initValue = *argument.value;
      }
      break;
    case ArgumentRole::Data:
      entry = add("argument", AMP_BUFFER_DATA, argument.name, type, loc);
      break;
    case ArgumentRole::ScalerState:
      entry = add("argument", AMP_BUFFER_SCALER_STATE, argument.stateName,
                  type, loc);
      if (succeeded(entry)) {
        (*entry)->initKind = AMP_INIT_CONSTANT;
        (*entry)->initValue = getInitialScalerState(
            argument.stateName, options ? options->initScale : 1.0,
            options ? options->hysteresis : 1);
      }
      break;
    }
    if (failed(entry))
      return failure();
  }
  for (unsigned result = 0; result < step.getNumResults(); ++result) {
    Type type = step.getResultTypes()[result];
    std::optional<unsigned> feeds;
    for (auto [index, argument] : llvm::enumerate(signature.arguments))
      if (argument.nextResult == result)
        feeds = index;
    FailureOr<TableEntry *> entry =
        result == signature.lossResult
            ? add("result", AMP_BUFFER_LOSS, "loss", type, step.getLoc())
        : result == signature.foundInfResult
            ? add("result", AMP_BUFFER_FOUND_INF, "found_inf", type,
                  step.getLoc())
        : feeds ? add("result", AMP_BUFFER_NEW_STATE, "result" + Twine(result),
                      type, step.getLoc())
                : add("result", AMP_BUFFER_OUTPUT, "result" + Twine(result),
                      type, step.getLoc());
    if (failed(entry))
      return failure();
    if (feeds)
      (*entry)->feeds = *feeds;
  }
  return table;
}

// The LLVM structs below mirror AmpStepBuffer and AmpCompiledStep field by
// field; these are the offsets of LLVM's natural layout of them.
static_assert(offsetof(AmpStepBuffer, name) == 0 &&
                  offsetof(AmpStepBuffer, shape) == 8 &&
                  offsetof(AmpStepBuffer, initValue) == 16 &&
                  offsetof(AmpStepBuffer, role) == 24 &&
                  offsetof(AmpStepBuffer, elementType) == 28 &&
                  offsetof(AmpStepBuffer, rank) == 32 &&
                  offsetof(AmpStepBuffer, feeds) == 36 &&
                  offsetof(AmpStepBuffer, initKind) == 40 &&
                  sizeof(AmpStepBuffer) == 48,
              "AmpStepBuffer is not {ptr, ptr, f64, i32 x 5}");
static_assert(offsetof(AmpCompiledStep, abiVersion) == 0 &&
                  offsetof(AmpCompiledStep, numBuffers) == 4 &&
                  offsetof(AmpCompiledStep, buffers) == 8 &&
                  offsetof(AmpCompiledStep, invoke) == 16 &&
                  sizeof(AmpCompiledStep) == 24,
              "AmpCompiledStep is not {i32, i32, ptr, ptr}");

/// Adds `<symbol>_invoke(void **descriptors)`, which calls the step's C
/// interface with one descriptor pointer per buffer, the AmpStepBuffer table
/// `<symbol>_buffers` (with the names and shapes it points to), and the
/// AmpCompiledStep `<symbol>` = {version, number of buffers, table, invoke}.
static LogicalResult addCompiledStep(ModuleOp module, StringRef stepName,
                                     ArrayRef<TableEntry> table) {
  MLIRContext *ctx = module.getContext();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(
      ("_mlir_ciface_" + stepName).str());
  if (!ciface)
    return module.emitError("amp-compile: the lowered module has no C "
                            "interface of @")
           << stepName;
  if (ciface.getNumArguments() != table.size())
    return module.emitError("amp-compile: the C interface of @")
           << stepName << " takes " << ciface.getNumArguments()
           << " descriptors for " << table.size() << " buffers";
  Location loc = ciface.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  Type f64 = builder.getF64Type();

  std::string invokeName = symbol + "_invoke";
  auto invoke = LLVM::LLVMFuncOp::create(
      builder, loc, invokeName, LLVM::LLVMFunctionType::get(voidType, {ptr}));
  Block *body = invoke.addEntryBlock(builder);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  SmallVector<Value> descriptors;
  for (unsigned i = 0, e = ciface.getNumArguments(); i < e; ++i) {
    Value slot = LLVM::GEPOp::create(inner, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    descriptors.push_back(LLVM::LoadOp::create(inner, loc, ptr, slot));
  }
  LLVM::CallOp::create(inner, loc, ciface, descriptors);
  LLVM::ReturnOp::create(inner, loc, ValueRange());

  // What the table points to: a name per buffer, a shape per buffer of
  // rank > 0.
  SmallVector<std::string> nameGlobals, shapeGlobals;
  for (auto [i, entry] : llvm::enumerate(table)) {
    std::string text = entry.name + '\0';
    nameGlobals.push_back(symbol + "_name" + std::to_string(i));
    LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), text.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, nameGlobals.back(),
        builder.getStringAttr(text));
    shapeGlobals.emplace_back();
    if (entry.shape.empty())
      continue;
    shapeGlobals.back() = symbol + "_shape" + std::to_string(i);
    auto shapeType = RankedTensorType::get(
        {static_cast<int64_t>(entry.shape.size())}, i64);
    LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(i64, entry.shape.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, shapeGlobals.back(),
        DenseIntElementsAttr::get(shapeType, ArrayRef(entry.shape)));
  }

  auto bufferType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, f64, i32, i32, i32, i32, i32});
  auto tableType = LLVM::LLVMArrayType::get(bufferType, table.size());
  std::string tableName = symbol + "_buffers";
  auto tableGlobal = LLVM::GlobalOp::create(
      builder, loc, tableType, /*isConstant=*/true, LLVM::Linkage::Internal,
      tableName, Attribute());
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(
        builder.createBlock(&tableGlobal.getInitializerRegion()));
    auto int32 = [&](int64_t value) -> Value {
      return LLVM::ConstantOp::create(builder, loc, i32,
                                      builder.getI32IntegerAttr(value));
    };
    Value value = LLVM::UndefOp::create(builder, loc, tableType);
    for (auto [i, entry] : llvm::enumerate(table)) {
      Value shape =
          entry.shape.empty()
              ? Value(LLVM::ZeroOp::create(builder, loc, ptr))
              : Value(LLVM::AddressOfOp::create(builder, loc, ptr,
                                                shapeGlobals[i]));
      Value fields[] = {
          LLVM::AddressOfOp::create(builder, loc, ptr, nameGlobals[i]),
          shape,
          LLVM::ConstantOp::create(builder, loc, f64,
                                   builder.getF64FloatAttr(entry.initValue)),
          int32(entry.role),
          int32(entry.elementType),
          int32(entry.shape.size()),
          int32(entry.feeds),
          int32(entry.initKind)};
      for (auto [field, fieldValue] : llvm::enumerate(fields))
        value = LLVM::InsertValueOp::create(
            builder, loc, value, fieldValue,
            ArrayRef<int64_t>{static_cast<int64_t>(i),
                              static_cast<int64_t>(field)});
    }
    LLVM::ReturnOp::create(builder, loc, value);
  }

  auto stepType = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, ptr, ptr});
  auto global = LLVM::GlobalOp::create(builder, loc, stepType,
                                       /*isConstant=*/true,
                                       LLVM::Linkage::External, symbol,
                                       Attribute());
  Block *init = builder.createBlock(&global.getInitializerRegion());
  builder.setInsertionPointToStart(init);
  Value fields[] = {
      LLVM::ConstantOp::create(builder, loc, i32,
                               builder.getI32IntegerAttr(AMP_STEP_ABI_VERSION)),
      LLVM::ConstantOp::create(builder, loc, i32,
                               builder.getI32IntegerAttr(table.size())),
      LLVM::AddressOfOp::create(builder, loc, ptr, tableName),
      LLVM::AddressOfOp::create(builder, loc, ptr, invokeName)};
  Value value = LLVM::UndefOp::create(builder, loc, stepType);
  for (auto [field, fieldValue] : llvm::enumerate(fields))
    value = LLVM::InsertValueOp::create(
        builder, loc, value, fieldValue,
        ArrayRef<int64_t>{static_cast<int64_t>(field)});
  LLVM::ReturnOp::create(builder, loc, value);
  return success();
}

static int emitObject(llvm::Module &module, llvm::raw_pwrite_stream &os) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no target for " + triple.str() + ": " + error);
  // A generic CPU: the object runs on whatever host the GPU is in.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return fail("the target cannot emit object files");
  passes.run(module);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "amp-compile: compile a training step for the "
                              "GPU ahead of time\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAllAmpDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  GPULoweringOptions gpuOptions;
  gpuOptions.chip = chip;
  gpuOptions.matmulF32 = matmulF32;
  if (std::string error = gpuOptions.validate(); !error.empty())
    return fail(error);
  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> pipelineOptions =
      stepOptions.getPipelineOptions();
  if (!pipelineOptions)
    return fail(llvm::toString(pipelineOptions.takeError()));

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + inputFile);
  FailureOr<func::FuncOp> step = findStepFunction(*module, stepOptions.function);
  if (failed(step))
    return 1;
  std::string stepName = step->getSymName().str();
  FailureOr<StepSignature> signature = readStepSignature(*step);
  if (failed(signature))
    return 1;
  // Other entry points (a forward-only @predict, ...) are not compiled.
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other.getSymName() != stepName && other.isPublic())
      other.erase();

  PassManager transform(&context);
  if (*pipelineOptions)
    buildAmpPipeline(transform, **pipelineOptions);
  else
    transform.addPass(createAmpStripMarkers());
  if (failed(transform.run(*module)))
    return fail("the AMP pipeline failed on " + inputFile);
  auto transformed = module->lookupSymbol<func::FuncOp>(stepName);
  if (failed(addScalerState(*signature, transformed)))
    return 1;
  FailureOr<SmallVector<TableEntry>> table =
      buildBufferTable(transformed, *signature, pipelineOptions->get());
  if (failed(table))
    return 1;
  transformed->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  PassManager lowering(&context);
  buildGPULoweringPipeline(lowering, gpuOptions);
  if (failed(lowering.run(*module)))
    return fail("amp-lower-to-nvvm failed on " + inputFile);
  if (failed(addCompiledStep(*module, stepName, *table)))
    return 1;

  std::error_code ec;
  llvm::ToolOutputFile output(outputFile, ec,
                              emit == Emit::Object ? llvm::sys::fs::OF_None
                                                   : llvm::sys::fs::OF_Text);
  if (ec)
    return fail("cannot write " + outputFile + ": " + ec.message());
  if (emit == Emit::MLIR) {
    module->print(output.os());
  } else {
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, stepName);
    if (!llvmModule)
      return fail("cannot translate the lowered step to LLVM IR");
    if (emit == Emit::LLVMIR)
      llvmModule->print(output.os(), nullptr);
    else if (int status = emitObject(*llvmModule, output.os()))
      return status;
  }
  output.keep();
  return 0;
}
