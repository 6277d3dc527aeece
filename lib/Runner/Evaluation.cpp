//===- Evaluation.cpp - Accuracy of a forward function --------------------===//

#include "amp/Runner/Evaluation.h"
#include "amp/Runner/Batcher.h"
#include <cstring>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<double> amp::evaluateAccuracy(CompiledStep &step,
                                             StringRef name,
                                             const LabeledData &data,
                                             int64_t batchSize) {
  llvm::SmallVector<unsigned> model = step.getSignature().getModelArguments();
  FunctionType functionType = step.getFunctionType(name);
  llvm::SmallVector<Type> types(functionType.getInputs());
  llvm::append_range(types, functionType.getResults());
  llvm::MutableArrayRef<HostArray> arguments = step.getArguments();
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
  const HostArray *inputs = &data.inputs, *labels = &data.labels;
  std::optional<DType> inputDType = getDType(inputType.getElementType());
  if (inputs->getDType() != inputDType || inputs->getShape().empty() ||
      inputs->getShape().drop_front() != inputType.getShape().drop_front())
    return makeError(data.inputsName + ": holds " +
                     describeArray(inputs->getDType(), inputs->getShape()) +
                     "; the input of @" + name + " takes samples " +
                     describeSamples(*inputDType, inputType.getShape()));
  int64_t n = inputs->getShape()[0], classes = logitsType.getShape()[1];
  llvm::ArrayRef<int64_t> labelShape = labels->getShape();
  bool oneHot = labelShape.size() == 2;
  if (labelShape.empty() || labelShape[0] != n ||
      (oneHot && labelShape[1] != classes) || labelShape.size() > 2)
    return makeError(data.labelsName + ": holds " +
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
