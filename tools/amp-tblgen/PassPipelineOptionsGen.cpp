//===- PassPipelineOptionsGen.cpp - Options of a pass pipeline ------------===//
//
// -gen-pass-pipeline-options: for each PassPipeline record (PassPipeline.td),
// the options of its PassPipelineOptions struct, declared from the Option
// records of the pipeline and of its passes, so that an option is written
// once, in TableGen, for the passes, the pipeline and whatever lists the
// pipeline's options (the Python bindings); and for each of its passes, the
// function that gives the pass the pipeline's values of its options.
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Pass.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace mlir;
using namespace mlir::tblgen;
using llvm::Record;
using llvm::RecordKeeper;

namespace {

/// A pass pipeline and its options, in the order of the generated struct:
/// the pipeline's own, then each pass's not given yet (by argument).
struct PassPipeline {
  PassPipeline(const Record *def);

  const Record *def;
  std::string optionsStruct;
  std::vector<Pass> passes;
  std::vector<PassOption> options;
  /// The option of the pipeline for an argument.
  llvm::StringMap<PassOption> byArgument;
};

} // namespace

PassPipeline::PassPipeline(const Record *def)
    : def(def), optionsStruct((def->getName() + "Options").str()) {
  for (const Record *pass : def->getValueAsListOfDefs("passes"))
    passes.emplace_back(pass);
  auto add = [&](const PassOption &option) {
    if (option.isListOption())
      llvm::PrintFatalError(def->getLoc(),
                            "list option '" + option.getArgument() +
                                "' is not supported in a pass pipeline");
    auto [it, inserted] = byArgument.try_emplace(option.getArgument(), option);
    if (inserted) {
      options.push_back(option);
      return;
    }
    if (it->second.getType() != option.getType())
      llvm::PrintFatalError(def->getLoc(),
                            "option '" + option.getArgument() + "' is " +
                                it->second.getType() + " in " + def->getName() +
                                " but " + option.getType() + " in a pass");
  };
  for (const Record *option : def->getValueAsListOfDefs("options"))
    add(PassOption(option));
  for (const Pass &pass : passes)
    for (const PassOption &option : pass.getOptions())
      add(option);
}

/// The declaration of `option` as a member of a PassPipelineOptions struct,
/// as mlir-tblgen declares a pass's options.
static void emitOptionDecl(const PassOption &option, llvm::raw_ostream &os) {
  os << llvm::formatv("  Option<{0}> {1}{{*this, \"{2}\", "
                      "::llvm::cl::desc(R\"PO({3})PO\")",
                      option.getType(), option.getCppVariableName(),
                      option.getArgument(), option.getDescription().trim());
  if (std::optional<StringRef> defaultValue = option.getDefaultValue())
    os << ", ::llvm::cl::init(" << *defaultValue << ")";
  if (std::optional<StringRef> flags = option.getAdditionalFlags())
    os << ", " << *flags;
  os << "};\n";
}

static void emitPipeline(const PassPipeline &pipeline, llvm::raw_ostream &os) {
  std::string suffix = StringRef(pipeline.def->getName()).upper();
  std::string argument = pipeline.def->getValueAsString("argument").str();

  os << "#ifdef GEN_PASS_PIPELINE_OPTION_DECLS_" << suffix << "\n";
  os << "// The options of " << argument << ".\n";
  for (const PassOption &option : pipeline.options)
    emitOptionDecl(option, os);
  os << "#undef GEN_PASS_PIPELINE_OPTION_DECLS_" << suffix << "\n#endif\n\n";

  os << "#ifdef GEN_PASS_PIPELINE_OPTION_LIST_" << suffix << "\n";
  os << "// PASS_PIPELINE_OPTION(field, argument) for each option of "
     << argument << ".\n";
  for (const PassOption &option : pipeline.options)
    os << llvm::formatv("PASS_PIPELINE_OPTION({0}, \"{1}\")\n",
                        option.getCppVariableName(), option.getArgument());
  os << "#undef PASS_PIPELINE_OPTION\n";
  os << "#undef GEN_PASS_PIPELINE_OPTION_LIST_" << suffix << "\n#endif\n\n";

  os << "#ifdef GEN_PASS_PIPELINE_PASS_OPTIONS_" << suffix << "\n";
  for (const Pass &pass : pipeline.passes) {
    std::string passOptions = (pass.getDef()->getName() + "Options").str();
    os << llvm::formatv("/// The options of {0} with the values of {1}'s "
                        "options of the same names.\n",
                        pass.getArgument(), argument);
    os << llvm::formatv("inline {0} get{0}(const {1} &options) {{\n",
                        passOptions, pipeline.optionsStruct);
    os << "  " << passOptions << " passOptions;\n";
    for (const PassOption &option : pass.getOptions())
      os << llvm::formatv(
          "  passOptions.{0} = options.{1}.getValue();\n",
          option.getCppVariableName(),
          pipeline.byArgument.at(option.getArgument()).getCppVariableName());
    os << "  return passOptions;\n}\n\n";
  }
  os << "#undef GEN_PASS_PIPELINE_PASS_OPTIONS_" << suffix << "\n#endif\n\n";
}

static bool emitPassPipelineOptions(const RecordKeeper &records,
                                    llvm::raw_ostream &os) {
  llvm::emitSourceFileHeader("Pass pipeline options", os, records);
  for (const Record *def : records.getAllDerivedDefinitions("PassPipeline"))
    emitPipeline(PassPipeline(def), os);
  return false;
}

static GenRegistration
    genPassPipelineOptions("gen-pass-pipeline-options",
                           "Generate the options of pass pipelines",
                           emitPassPipelineOptions);
