//===- amp-compile.cpp - Compile a training step for the GPU ahead of time ===//
//
// Turns a training step (docs/TrainingStepIR.md) into an object file that
// runs on an NVIDIA GPU without MLIR: the AMP pipeline (or the fp32 step
// without --amp), amp-lower-to-nvvm, and an `AmpCompiledStep` (the C ABI of
// runtime/include/amp/Runtime/AmpSession.h) describing every buffer of the
// step, with an entry point that calls it. Link the object with
// libamp_runtime.so; docs/GPU.md has the details.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Pipelines/GPULowering.h"
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

/// The element type as the signature names it.
static std::optional<StringRef> getTypeName(Type type) {
  if (type.isF32())
    return StringRef("f32");
  if (type.isF16())
    return StringRef("f16");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isF64())
    return StringRef("f64");
  if (type.isInteger(1))
    return StringRef("i1");
  if (type.isInteger(32))
    return StringRef("i32");
  if (type.isInteger(64))
    return StringRef("i64");
  return std::nullopt;
}

static std::string describeInit(const Initializer &init) {
  switch (init.kind) {
  case Initializer::Kind::Zeros:
    return "zeros";
  case Initializer::Kind::Ones:
    return "ones";
  case Initializer::Kind::Glorot:
    return "glorot";
  case Initializer::Kind::Normal:
    return "normal:" + std::to_string(init.stddev);
  }
  llvm_unreachable("unknown initializer");
}

/// The signature text of AmpCompiledStep: one line per buffer, arguments
/// then results (which the lowering turned into trailing out-parameters).
static FailureOr<std::string>
describeBuffers(func::FuncOp step, const StepSignature &signature,
                const AmpPipelineOptions *options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto describe = [&](StringRef kind, StringRef role, const Twine &name,
                      Type type, Location loc) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<StringRef> element =
        tensor ? getTypeName(tensor.getElementType()) : std::nullopt;
    if (!tensor || !tensor.hasStaticShape() || !element)
      return emitError(loc) << "amp-compile: " << kind << " '" << name
                            << "' has type " << type
                            << "; compiled steps take tensors of static "
                               "shapes of f32, f16, bf16, f64, i1, i32, i64";
    os << kind << ' ' << role << ' ' << name << ' ' << *element << ' ';
    if (tensor.getRank() == 0)
      os << "scalar";
    else
      llvm::interleave(tensor.getShape(), os, ",");
    return success();
  };

  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    Location loc = step.getArgument(index).getLoc();
    Type type = step.getArgumentTypes()[index];
    LogicalResult described = failure();
    switch (argument.role) {
    case ArgumentRole::Parameter:
    case ArgumentRole::OptimizerState:
    case ArgumentRole::Buffer:
      described = describe("arg",
                           argument.role == ArgumentRole::Parameter ? "param"
                           : argument.role == ArgumentRole::Buffer  ? "buffer"
                                                                    : "optstate",
                           argument.name, type, loc);
      os << " init=" << describeInit(argument.init);
      break;
    case ArgumentRole::Hyperparameter:
      if (!argument.value)
        return emitError(loc)
               << "amp-compile: hyperparameter '" << argument.name
               << "' needs an 'amp.value' to start the compiled step at";
      described = describe("arg", "hyper", argument.name, type, loc);
      os << " init=" << *argument.value;
      break;
    case ArgumentRole::Data:
      described = describe("arg", "data", argument.name, type, loc);
      break;
    case ArgumentRole::ScalerState:
      described = describe("arg", "scaler", argument.stateName, type, loc);
      os << " init="
         << getInitialScalerState(argument.stateName,
                                  options ? options->initScale : 1.0,
                                  options ? options->hysteresis : 1);
      break;
    }
    if (failed(described))
      return failure();
    os << '\n';
  }
  for (unsigned result = 0; result < step.getNumResults(); ++result) {
    Type type = step.getResultTypes()[result];
    std::optional<unsigned> feeds;
    for (auto [index, argument] : llvm::enumerate(signature.arguments))
      if (argument.nextResult == result)
        feeds = index;
    LogicalResult described =
        result == signature.lossResult
            ? describe("result", "loss", "loss", type, step.getLoc())
        : result == signature.foundInfResult
            ? describe("result", "found_inf", "found_inf", type, step.getLoc())
        : feeds ? describe("result", "state", "result" + Twine(result), type,
                           step.getLoc())
                : describe("result", "output", "result" + Twine(result), type,
                           step.getLoc());
    if (failed(described))
      return failure();
    if (feeds)
      os << " feeds=" << *feeds;
    os << '\n';
  }
  return text;
}

/// Adds `<symbol>_invoke(void **descriptors)`, which calls the step's C
/// interface with one descriptor pointer per buffer, and the
/// AmpCompiledStep `<symbol>` = {version, signature, invoke}.
static LogicalResult addCompiledStep(ModuleOp module, StringRef stepName,
                                     StringRef signatureText) {
  MLIRContext *ctx = module.getContext();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(
      ("_mlir_ciface_" + stepName).str());
  if (!ciface)
    return module.emitError("amp-compile: the lowered module has no C "
                            "interface of @")
           << stepName;
  Location loc = ciface.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidType = LLVM::LLVMVoidType::get(ctx);

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

  std::string text = (signatureText + Twine('\0')).str();
  auto textType = LLVM::LLVMArrayType::get(builder.getI8Type(), text.size());
  std::string textName = symbol + "_signature";
  LLVM::GlobalOp::create(builder, loc, textType, /*isConstant=*/true,
                         LLVM::Linkage::Internal, textName,
                         builder.getStringAttr(text));

  auto stepType = LLVM::LLVMStructType::getLiteral(
      ctx, {builder.getI32Type(), ptr, ptr});
  auto global = LLVM::GlobalOp::create(builder, loc, stepType,
                                       /*isConstant=*/true,
                                       LLVM::Linkage::External, symbol,
                                       Attribute());
  Block *init = builder.createBlock(&global.getInitializerRegion());
  builder.setInsertionPointToStart(init);
  Value value = LLVM::UndefOp::create(builder, loc, stepType);
  Value version = LLVM::ConstantOp::create(
      builder, loc, builder.getI32Type(),
      builder.getI32IntegerAttr(/*AMP_STEP_ABI_VERSION=*/1));
  value = LLVM::InsertValueOp::create(builder, loc, value, version,
                                      ArrayRef<int64_t>{0});
  value = LLVM::InsertValueOp::create(
      builder, loc, value,
      LLVM::AddressOfOp::create(builder, loc, ptr, textName),
      ArrayRef<int64_t>{1});
  value = LLVM::InsertValueOp::create(
      builder, loc, value,
      LLVM::AddressOfOp::create(builder, loc, ptr, invokeName),
      ArrayRef<int64_t>{2});
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
  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> parsedOptions =
      stepOptions.getPipelineOptions();
  if (!parsedOptions)
    return fail(llvm::toString(parsedOptions.takeError()));
  std::unique_ptr<AmpPipelineOptions> pipelineOptions =
      std::move(*parsedOptions);

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
  // The runtime allocates every buffer once, at its compiled size.
  if (signature->dynamicBatch) {
    unsigned data = signature->getArguments(ArgumentRole::Data).front();
    emitError(step->getArgument(data).getLoc())
        << "amp-compile: data argument '" << signature->arguments[data].name
        << "' has a dynamic batch dimension; ahead-of-time GPU steps take "
           "static shapes: compile the step for one batch size";
    return 1;
  }
  // Other entry points (a forward-only @predict, ...) are not compiled.
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other.getSymName() != stepName && other.isPublic())
      other.erase();

  PassManager transform(&context);
  if (pipelineOptions)
    buildAmpPipeline(transform, *pipelineOptions);
  else
    transform.addPass(createAmpStripMarkers());
  if (failed(transform.run(*module)))
    return fail("the AMP pipeline failed on " + inputFile);
  auto transformed = module->lookupSymbol<func::FuncOp>(stepName);
  if (failed(addScalerState(*signature, transformed)))
    return 1;
  FailureOr<std::string> buffers =
      describeBuffers(transformed, *signature, pipelineOptions.get());
  if (failed(buffers))
    return 1;
  transformed->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  // The state names are in the signature now; LLVM has no use for them.
  auto stateAttr = StringAttr::get(&context, AmpDialect::kStateAttrName);
  for (unsigned i = 0; i < transformed.getNumArguments(); ++i)
    transformed.removeArgAttr(i, stateAttr);
  for (unsigned i = 0; i < transformed.getNumResults(); ++i)
    transformed.removeResultAttr(i, stateAttr);

  PassManager lowering(&context);
  buildGPULoweringPipeline(lowering, gpuOptions);
  if (failed(lowering.run(*module)))
    return fail("amp-lower-to-nvvm failed on " + inputFile);
  if (failed(addCompiledStep(*module, stepName, *buffers)))
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
