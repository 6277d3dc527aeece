//===- DropContractAttributes.cpp - amp.* signature attributes go --------===//
//
// Implements `amp-drop-contract-attributes`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPDROPCONTRACTATTRIBUTES
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

DictionaryAttr withoutContractAttributes(DictionaryAttr attributes,
                                         MLIRContext *context) {
  NamedAttrList kept;
  if (attributes)
    for (NamedAttribute attribute : attributes)
      if (!attribute.getName().getValue().starts_with("amp."))
        kept.push_back(attribute);
  return kept.getDictionary(context);
}

struct DropContractAttributesPass
    : public amp::impl::AmpDropContractAttributesBase<
          DropContractAttributesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        function.setArgAttrs(i, withoutContractAttributes(
                                    function.getArgAttrDict(i), context));
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        function.setResultAttrs(i, withoutContractAttributes(
                                       function.getResultAttrDict(i), context));
    }
  }
};

} // namespace
