//===- LinalgToCPULibrary.cpp - Contractions to oneDNN calls --------------===//
//
// Implements `amp-linalg-to-cpu-library`: matmuls, batch matmuls and 2-d
// convolutions on memrefs become calls of the CPU runtime (CpuRuntime.h),
// operands in the runtime's order as views of their own strides. A
// convolution's geometry says which of oneDNN's primitives computes it
// with the least work: the weight gradients torch-mlir writes as
// convolutions with image-sized "filters" go to convolution_backward_weights,
// the input gradients of strided convolutions (zeros interleaved into the
// output gradient) to convolution_backward_data, the rest to the forward
// convolution; zero padding written around an input becomes the call's
// padding instead of a copy. With `epilogues`, the elementwise code next to
// a matmul that the library computes the same way (a low output type, a
// bias) goes into the call.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTOCPULIBRARY
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The suffix of a linalg op's entry points ("F32", "F16", "BF16" for its
/// inputs' type), when it is a product the runtime takes
/// (getCpuProductInputType) of inputs it has entries for; else empty.
StringRef getEntrySuffix(linalg::LinalgOp op) {
  Type input = getCpuProductInputType(op);
  if (!input)
    return {};
  if (input.isF32())
    return "F32";
  if (input.isF16())
    return "F16";
  if (input.isBF16())
    return "BF16";
  return {};
}

/// The output and whether the call accumulates into it: not when a fill of
/// zero right before `op` (erased here) is all it would accumulate into.
Value takeAccumulation(OpBuilder &builder, linalg::LinalgOp op) {
  Value output = op.getDpsInits()[0];
  linalg::FillOp fill = getZeroFillBefore(op, output);
  if (fill)
    fill.erase();
  return arith::ConstantIntOp::create(builder, op.getLoc(), fill ? 0 : 1, 32);
}

/// The memref a value views: a `memref.alloc`, a function argument, or
/// whatever op made it when that is not a view.
Value getRoot(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// Whether two roots may be one memory: only when they are the same value.
/// Distinct allocations are, and so are distinct function arguments, which
/// the contract makes buffers of their own (docs/TrainingStepIR.md,
/// "Output: the function signature after the pipeline").
bool mayAlias(Value root, Value other) { return root == other; }

/// Whether the call `op` may write its memref operand number `index`
/// (among its memref operands): the runtime's products and convolutions
/// write only their third (CpuRuntime.h), other callees any.
bool mayWriteMemRefOperand(func::CallOp op, unsigned index) {
  return !isCpuLibraryCall(op) || index == 2;
}

/// Whether `op` may write (or, unless `writesOnly`, read) memory that one of
/// `roots` views: calls are taken to read and write each memref they are
/// passed (but see mayWriteMemRefOperand), ops with unknown effects
/// anything.
bool mayAccess(Operation *op, ArrayRef<Value> roots, bool writesOnly) {
  auto viewsRoot = [&](Value value) {
    Value root = getRoot(value);
    return llvm::any_of(roots, [&](Value other) { return mayAlias(root, other); });
  };
  if (isa<CallOpInterface>(op)) {
    auto call = dyn_cast<func::CallOp>(op);
    unsigned index = 0;
    for (Value operand : op->getOperands()) {
      if (!isa<BaseMemRefType>(operand.getType()))
        continue;
      bool mayWrite = !call || mayWriteMemRefOperand(call, index++);
      if ((mayWrite || !writesOnly) && viewsRoot(operand))
        return true;
    }
    return false;
  }
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      continue;
    if (writesOnly && isa<MemoryEffects::Read>(effect.getEffect()))
      continue;
    if (!effect.getValue() || viewsRoot(effect.getValue()))
      return true;
  }
  return false;
}

/// Whether an op strictly between `first` and `last` (in one block) may
/// access `roots` as mayAccess tells.
bool anyBetweenMayAccess(Operation *first, Operation *last,
                         ArrayRef<Value> roots, bool writesOnly) {
  for (Operation *op = first->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (mayAccess(op, roots, writesOnly))
      return true;
  return false;
}

/// Whether `value` fills its output with zero: a `linalg.fill` of zero, or
/// a linalg op without inputs whose body yields a zero.
bool isZeroFillOf(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer &&
           matchPattern(fill.value(), m_AnyZeroFloat());
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 0 ||
      linalgOp.getNumDpsInits() != 1 || linalgOp.getDpsInits()[0] != buffer ||
      !linalgOp.getIndexingMapsArray()[0].isIdentity() ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops())
    return false;
  Block *body = linalgOp.getBlock();
  return body->getOperations().size() == 1 &&
         matchPattern(body->getTerminator()->getOperand(0), m_AnyZeroFloat());
}

/// A buffer that holds zeros except for one copy of `source` at spatial
/// offsets `low` with spatial strides `strides` (the pads, and the zeros
/// interleaved into output gradients, that torch-mlir writes around the
/// operands of convolutions), as its reader `reader` sees it; `ops` made it
/// and have no other reader, in an order they can be erased in.
struct ZeroPadded {
  Value source;
  int64_t low[2], strides[2];
  SmallVector<Operation *> ops;
};

/// The ZeroPadded form of `buffer`, an N x C x H x W input of `reader`,
/// when it is an allocation whose only users are a zero fill, then a copy
/// of an N x C view of its spatial interior, then `reader` (and its
/// deallocations), in one block, with `source` unchanged from the copy to
/// `reader`.
std::optional<ZeroPadded> matchZeroPadded(Value buffer, Operation *reader) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != reader->getBlock())
    return std::nullopt;
  Operation *fill = nullptr;
  memref::SubViewOp interior;
  SmallVector<Operation *> deallocs;
  for (Operation *user : buffer.getUsers()) {
    if (user == reader)
      continue;
    if (isa<memref::DeallocOp>(user)) {
      deallocs.push_back(user);
    } else if (isZeroFillOf(user, buffer) && !fill) {
      fill = user;
    } else if (auto subview = dyn_cast<memref::SubViewOp>(user);
               subview && !interior) {
      interior = subview;
    } else {
      return std::nullopt;
    }
  }
  if (!fill || !interior || !interior->hasOneUse())
    return std::nullopt;
  Operation *copy = *interior->user_begin();
  Value source;
  if (auto memrefCopy = dyn_cast<memref::CopyOp>(copy);
      memrefCopy && memrefCopy.getTarget() == interior.getResult())
    source = memrefCopy.getSource();
  if (auto linalgCopy = dyn_cast<linalg::CopyOp>(copy);
      linalgCopy && linalgCopy.getOutputs()[0] == interior.getResult())
    source = linalgCopy.getInputs()[0];
  if (!source ||
      fill->getBlock() != reader->getBlock() ||
      copy->getBlock() != reader->getBlock() ||
      !fill->isBeforeInBlock(copy) || !copy->isBeforeInBlock(reader))
    return std::nullopt;
  ArrayRef<int64_t> offsets = interior.getStaticOffsets(),
                    sizes = interior.getStaticSizes(),
                    strides = interior.getStaticStrides();
  auto bufferType = cast<MemRefType>(buffer.getType());
  if (!bufferType.hasStaticShape() || offsets.size() != 4 || interior.getType().getRank() != 4 ||
      offsets[0] != 0 || offsets[1] != 0 || strides[0] != 1 ||
      strides[1] != 1 || sizes[0] != bufferType.getDimSize(0) ||
      sizes[1] != bufferType.getDimSize(1) ||
      llvm::any_of(llvm::concat<const int64_t>(offsets, strides),
                   ShapedType::isDynamic))
    return std::nullopt;
  if (anyBetweenMayAccess(copy, reader, getRoot(source), /*writesOnly=*/true))
    return std::nullopt;
  ZeroPadded padded{source, {offsets[2], offsets[3]}, {strides[2], strides[3]},
                    deallocs};
  padded.ops.append({fill, copy, interior, alloc});
  return padded;
}

/// The spatial parameters of the convolution a call computes (CpuRuntime.h):
/// strides, dilations, padding before and after, {H, W} each.
struct Geometry {
  int64_t strides[2], dilations[2], low[2], high[2];
};

/// The extent of the input a convolution with `output` positions, `window`
/// filter taps, `stride` and `dilation` reads along one dimension.
int64_t getReadExtent(int64_t output, int64_t window, int64_t stride,
                      int64_t dilation) {
  return (output - 1) * stride + (window - 1) * dilation + 1;
}

/// The runtime's convolution input `source` (N x C x H x W: the input, or
/// the source of its zero padding when `padded`) read over `extent[d]`
/// positions along spatial dimension d: `source` itself, or a view cropped
/// to what the convolution reads; `geometry`'s padding set to match. An
/// input less than a stride longer than what is read stays whole: oneDNN
/// rounds its output count down (`(H + pads - window) / stride + 1`), so
/// it reads the same, and a cropped view is no dense layout, which it
/// reorders first (a strided 1 x 1 convolution's 32 x 32 image read as
/// 31 x 31).
Value cropToExtent(OpBuilder &builder, Location loc, Value source,
                   const std::optional<ZeroPadded> &padded,
                   const int64_t extent[2], Geometry &geometry) {
  auto type = cast<MemRefType>(source.getType());
  SmallVector<int64_t> sizes(type.getShape());
  for (int d = 0; d < 2; ++d) {
    int64_t low = padded ? padded->low[d] : 0;
    int64_t read = extent[d] - low;
    int64_t size = sizes[2 + d];
    if (size - read >= geometry.strides[d])
      size = read;
    geometry.low[d] = low;
    geometry.high[d] = std::max<int64_t>(read - size, 0);
    sizes[2 + d] = size;
  }
  if (llvm::equal(sizes, type.getShape()))
    return source;
  return memref::SubViewOp::create(builder, loc, source,
                                   SmallVector<int64_t>(4, 0), sizes,
                                   SmallVector<int64_t>(4, 1));
}

/// `memref` with its first two dimensions swapped (a view).
Value swapFirstTwo(OpBuilder &builder, Location loc, Value memref) {
  AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0, 2, 3},
                                                builder.getContext());
  return memref::TransposeOp::create(builder, loc, memref,
                                     AffineMapAttr::get(swap));
}

/// The memref `value` reshapes (through memref.expand_shape and
/// memref.collapse_shape only).
Value stripReshapes(Value value) {
  while (true) {
    if (auto expand = value.getDefiningOp<memref::ExpandShapeOp>())
      value = expand.getSrc();
    else if (auto collapse = value.getDefiningOp<memref::CollapseShapeOp>())
      value = collapse.getSrc();
    else
      return value;
  }
}

/// Whether `type` is a static memref without a layout (row-major, dense).
bool isDenseStatic(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

/// The strides of `shape`'s dimensions of size other than one when it
/// reshapes `dims` ((size, stride) pairs, outer to inner, of size other
/// than one): each merges neighbours that are contiguous, or none when it
/// would have to split one.
std::optional<SmallVector<int64_t>>
regroup(ArrayRef<std::pair<int64_t, int64_t>> dims, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides;
  size_t next = 0;
  for (int64_t size : shape) {
    if (size == 1)
      continue;
    int64_t merged = 1, stride = 0;
    while (merged < size && next < dims.size()) {
      auto [dimSize, dimStride] = dims[next++];
      if (merged > 1 && stride != dimStride * dimSize)
        return std::nullopt;
      merged *= dimSize;
      stride = dimStride;
    }
    if (merged != size)
      return std::nullopt;
    strides.push_back(stride);
  }
  return strides;
}

/// The dense N x C x H x W buffer that `operand`, a C x N x H x W input of
/// `reader`, holds with its first two dimensions swapped, when it reshapes a
/// buffer that a linalg.transpose of that buffer (reshaped) wrote whole last
/// before `reader`, in its block, and the transpose's source is unchanged up
/// to `reader`: the copies torch-mlir makes of activations and output
/// gradients for weight gradients, which the call reads in place instead.
Value findSwappedSource(Value operand, Operation *reader) {
  Value copy = stripReshapes(operand);
  if (!copy.getDefiningOp<memref::AllocOp>() || !isDenseStatic(copy.getType()))
    return nullptr;
  Operation *writer = reader->getPrevNode();
  while (writer && !mayAccess(writer, copy, /*writesOnly=*/true))
    writer = writer->getPrevNode();
  auto transpose = dyn_cast_or_null<linalg::TransposeOp>(writer);
  if (!transpose || transpose.getInit() != copy)
    return nullptr;
  Value input = transpose.getInput();
  Value source = stripReshapes(input);
  ArrayRef<int64_t> shape = cast<MemRefType>(operand.getType()).getShape();
  if (!isDenseStatic(input.getType()) || !isDenseStatic(source.getType()) ||
      cast<MemRefType>(source.getType()).getShape() !=
          ArrayRef<int64_t>{shape[1], shape[0], shape[2], shape[3]} ||
      anyBetweenMayAccess(transpose, reader, getRoot(source),
                          /*writesOnly=*/true))
    return nullptr;
  // The copy's dimensions and their strides in the source's memory ...
  auto inputType = cast<MemRefType>(input.getType());
  SmallVector<int64_t> inputStrides = inputType.getStridesAndOffset().first;
  SmallVector<std::pair<int64_t, int64_t>> dims;
  for (int64_t dim : transpose.getPermutation())
    if (inputType.getDimSize(dim) != 1)
      dims.push_back({inputType.getDimSize(dim), inputStrides[dim]});
  std::optional<SmallVector<int64_t>> strides = regroup(dims, shape);
  // ... are the source's with its first two swapped.
  SmallVector<int64_t> swapped =
      cast<MemRefType>(source.getType()).getStridesAndOffset().first;
  std::swap(swapped[0], swapped[1]);
  SmallVector<int64_t> expected;
  for (auto [size, stride] : llvm::zip(shape, swapped))
    if (size != 1)
      expected.push_back(stride);
  return strides && *strides == expected ? source : nullptr;
}

/// `operand`, a C x N x H x W input of `reader`, as an N x C x H x W view:
/// the buffer it is a transposed copy of (findSwappedSource), else a
/// memref.transpose view of it.
Value swapFirstTwoOfInput(OpBuilder &builder, Location loc, Value operand,
                          Operation *reader) {
  if (Value source = findSwappedSource(operand, reader))
    return source;
  return swapFirstTwo(builder, loc, operand);
}

/// Grows `corner` to the spatial sizes of `view` (N x C x H x W) that are
/// read: through unit-stride subviews of all its channels at spatial offset
/// 0, what their own users read; through any other user but `writer` and
/// deallocations, all of `view`.
void growReadCorner(Value view, Operation *writer, int64_t corner[2]) {
  auto type = cast<MemRefType>(view.getType());
  for (Operation *user : view.getUsers()) {
    if (user == writer || isa<memref::DeallocOp>(user))
      continue;
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (subview && subview.getSource() == view &&
        subview.getType().getRank() == 4 &&
        subview.getStaticSizes().take_front(2) ==
            type.getShape().take_front(2) &&
        llvm::all_of(subview.getStaticOffsets(),
                     [](int64_t offset) { return offset == 0; }) &&
        llvm::all_of(subview.getStaticStrides(),
                     [](int64_t stride) { return stride == 1; })) {
      growReadCorner(subview.getResult(), writer, corner);
      continue;
    }
    for (int d = 0; d < 2; ++d)
      corner[d] = std::max(corner[d], type.getDimSize(2 + d));
  }
}

/// `output`, which `conv` overwrites, cropped to its spatial corner that is
/// read (growReadCorner) when it is a static allocation; else `output`.
/// The weight gradients torch-mlir writes for strided convolutions compute
/// a window larger than the filter (4 x 4 for 3 x 3 at stride 2) and read
/// only its corner.
Value cropToRead(OpBuilder &builder, Location loc, Value output,
                 Operation *conv) {
  auto type = cast<MemRefType>(output.getType());
  if (!output.getDefiningOp<memref::AllocOp>() || !type.hasStaticShape())
    return output;
  int64_t corner[2] = {0, 0};
  growReadCorner(output, conv, corner);
  if (corner[0] == 0 || corner[1] == 0 ||
      llvm::equal(corner, type.getShape().drop_front(2)))
    return output;
  return memref::SubViewOp::create(
      builder, loc, output, SmallVector<int64_t>(4, 0),
      SmallVector<int64_t>{type.getDimSize(0), type.getDimSize(1), corner[0],
                           corner[1]},
      SmallVector<int64_t>(4, 1));
}

/// The readers of a product's f32 output `product` when it is a fresh
/// buffer that only linalg.generic ops read, each only through arith.truncf
/// to `lowType`.
std::optional<SmallVector<linalg::GenericOp>>
findTruncatingReaders(linalg::LinalgOp op, Value product, Type lowType) {
  if (!product.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  SmallVector<linalg::GenericOp> readers;
  for (Operation *user : product.getUsers()) {
    if (user == op.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto reader = dyn_cast<linalg::GenericOp>(user);
    if (!reader || llvm::is_contained(reader.getDpsInits(), product))
      return std::nullopt;
    for (OpOperand *input : reader.getDpsInputOperands()) {
      if (input->get() != product)
        continue;
      for (Operation *use : reader.getMatchingBlockArgument(input).getUsers()) {
        auto truncate = dyn_cast<arith::TruncFOp>(use);
        if (!truncate || truncate.getType() != lowType)
          return std::nullopt;
      }
    }
    if (!llvm::is_contained(readers, reader))
      readers.push_back(reader);
  }
  if (readers.empty())
    return std::nullopt;
  return readers;
}

/// Replaces the f32 buffer `product` by one of `lowType`, which `readers`
/// read without their truncf; returns it. A lone reader that only rounds
/// the product whole into a fresh buffer that nothing uses before it (a
/// cast that amp-fuse-elementwise kept) goes instead, and its buffer is the
/// one returned. The product's allocation is the caller's to erase.
Value lowerOutputType(OpBuilder &builder, Value product, Type lowType,
                      ArrayRef<linalg::GenericOp> readers,
                      DenseSet<Operation *> &erased) {
  auto alloc = product.getDefiningOp<memref::AllocOp>();
  linalg::GenericOp cast = readers.front();
  if (readers.size() == 1 && isWholeTruncation(cast) &&
      cast->getBlock() == alloc->getBlock()) {
    auto target = cast.getDpsInits()[0].getDefiningOp<memref::AllocOp>();
    auto afterCast = [&](Operation *user) {
      Operation *inBlock = alloc->getBlock()->findAncestorOpInBlock(*user);
      return inBlock && (inBlock == cast || cast->isBeforeInBlock(inBlock));
    };
    if (target && target->getNumOperands() == 0 &&
        target->getBlock() == alloc->getBlock() &&
        llvm::all_of(target->getUsers(), afterCast)) {
      target->moveBefore(alloc);
      erased.insert(cast);
      cast.erase();
      for (Operation *user : llvm::make_early_inc_range(product.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      return target;
    }
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(alloc);
  MemRefType type = alloc.getType();
  Value low = memref::AllocOp::create(
      builder, alloc.getLoc(),
      MemRefType::get(type.getShape(), lowType, type.getLayout(),
                      type.getMemorySpace()),
      alloc.getDynamicSizes(), alloc.getSymbolOperands(),
      alloc.getAlignmentAttr());
  for (linalg::GenericOp reader : readers) {
    for (OpOperand *input : reader.getDpsInputOperands()) {
      if (input->get() != product)
        continue;
      BlockArgument argument = reader.getMatchingBlockArgument(input);
      input->set(low);
      argument.setType(lowType);
      for (Operation *use : llvm::make_early_inc_range(argument.getUsers())) {
        use->getResult(0).replaceAllUsesWith(argument);
        use->erase();
      }
    }
  }
  for (Operation *user : llvm::make_early_inc_range(product.getUsers()))
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user))
      dealloc.getMemrefMutable().assign(low);
  return low;
}

/// Replaces the convolution `conv` (accumulating into its output when
/// `accumulate`) by a call of the runtime: oneDNN's weight gradient,
/// input gradient or forward convolution, whichever `conv`'s geometry is.
void lowerConvolution(LibraryCallBuilder &calls, linalg::Conv2DNchwFchwOp conv,
                      StringRef suffix, bool epilogues,
                      DenseSet<Operation *> &erased) {
  OpBuilder builder(conv);
  Location loc = conv.getLoc();
  Value accumulate = takeAccumulation(builder, conv);
  Value input = conv.getDpsInputs()[0], filter = conv.getDpsInputs()[1],
        output = conv.getDpsInits()[0];
  auto shape = [](Value memref) {
    return cast<MemRefType>(memref.getType()).getShape();
  };
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  ArrayRef<int64_t> filterShape = shape(filter), outputShape = shape(output);
  // Shapes known at compile time: the geometry is worked out here.
  bool isStatic = llvm::all_of(ValueRange{input, filter, output}, [](Value v) {
    return cast<MemRefType>(v.getType()).hasStaticShape();
  });
  std::optional<ZeroPadded> padded;
  if (isStatic)
    padded = matchZeroPadded(input, conv);
  bool unitInterior =
      padded && padded->strides[0] == 1 && padded->strides[1] == 1;
  Geometry geometry;
  SmallVector<Value> memrefs;
  std::string callee;

  llvm::SmallDenseMap<int64_t, Value> constants;
  auto index = [&](int64_t value) -> Value {
    Value &constant = constants[value];
    if (!constant)
      constant = arith::ConstantIntOp::create(builder, loc, value, 64);
    return constant;
  };
  // The output in the inputs' low type where all its readers truncate it
  // to that type.
  auto writeLowOutput = [&] {
    Type inputType = getElementTypeOrSelf(input.getType());
    if (!epilogues || inputType.isF32() || !matchPattern(accumulate, m_Zero()))
      return;
    std::optional<SmallVector<linalg::GenericOp>> readers =
        findTruncatingReaders(conv, output, inputType);
    if (!readers)
      return;
    Operation *product = output.getDefiningOp();
    output = lowerOutputType(builder, output, inputType, *readers, erased);
    callee += ("To" + suffix).str();
    conv.getDpsInitsMutable()[0].set(output);
    product->erase();
  };
  auto call = [&] {
    SmallVector<Value> scalars;
    for (int64_t *values : {geometry.strides, geometry.dilations})
      llvm::append_range(scalars,
                         ValueRange{index(values[0]), index(values[1])});
    for (int d = 0; d < 2; ++d)
      scalars.push_back(index(geometry.low[d]));
    for (int d = 0; d < 2; ++d)
      scalars.push_back(index(geometry.high[d]));
    scalars.push_back(accumulate);
    calls.call(builder, loc, callee, memrefs, scalars);
    conv.erase();
  };

  // The input gradient of a strided convolution: a stride-1 convolution of
  // the output gradient with zeros interleaved (padded's interior strides,
  // the forward strides) by the rotated filter. oneDNN's backward data skips
  // the zeros; the padding is the forward's, (window - 1) * dilation less
  // the zeros written before the output gradient.
  if (padded && !unitInterior && strides[0] == 1 && strides[1] == 1) {
    ArrayRef<int64_t> gradientShape = shape(padded->source);
    bool fits = true;
    for (int d = 0; d < 2; ++d) {
      int64_t stride = padded->strides[d], window = filterShape[2 + d];
      int64_t low = (window - 1) * dilations[d] - padded->low[d];
      int64_t extent =
          getReadExtent(gradientShape[2 + d], window, stride, dilations[d]);
      // Any high padding that keeps OH = (H + low + high - extent') / stride
      // + 1 describes the same sums; there is none when the input gradient
      // has rows beyond the reach of the output gradient.
      int64_t high = extent - low - outputShape[2 + d];
      if (high < 0 && high + stride - 1 >= 0)
        high = 0;
      fits &= low >= 0 && high >= 0;
      geometry.strides[d] = stride;
      geometry.dilations[d] = dilations[d];
      geometry.low[d] = low;
      geometry.high[d] = high;
    }
    if (fits) {
      callee = (kCpuConv2DBackwardData + suffix).str();
      writeLowOutput();
      memrefs = {padded->source, swapFirstTwo(builder, loc, filter), output};
      call();
      for (Operation *op : padded->ops)
        op->erase();
      return;
    }
  }

  // The runtime reads the padded input from its source when the zeros are
  // only around it.
  if (!unitInterior)
    padded.reset();
  int64_t extent[2];
  if (!isStatic) {
    // The runtime checks that the sizes fit the strides and dilations.
    for (int d = 0; d < 2; ++d) {
      geometry.strides[d] = strides[d];
      geometry.dilations[d] = dilations[d];
      geometry.low[d] = geometry.high[d] = 0;
    }
    callee = (kCpuConv2D + suffix).str();
    memrefs = {input, filter, output};
  } else if (isFilterGradientConvolution(conv)) {
    // out[c, f, i, j] = sum_{n, p, q} in[c, n, i*s + p*d, ..] * w[f, n, p, q]
    // is the gradient of filter f x c of a convolution of image n with
    // stride d and dilation s (linalg's), whose output gradient is w.
    if (matchPattern(accumulate, m_Zero()))
      output = cropToRead(builder, loc, output, conv);
    for (int d = 0; d < 2; ++d) {
      extent[d] = getReadExtent(filterShape[2 + d], shape(output)[2 + d],
                                dilations[d], strides[d]);
      geometry.strides[d] = dilations[d];
      geometry.dilations[d] = strides[d];
    }
    Value source = swapFirstTwoOfInput(
        builder, loc, padded ? padded->source : input, conv);
    callee = (kCpuConv2DBackwardWeights + suffix).str();
    memrefs = {cropToExtent(builder, loc, source, padded, extent, geometry),
               swapFirstTwoOfInput(builder, loc, filter, conv),
               swapFirstTwo(builder, loc, output)};
  } else {
    for (int d = 0; d < 2; ++d) {
      extent[d] = getReadExtent(outputShape[2 + d], filterShape[2 + d],
                                strides[d], dilations[d]);
      geometry.strides[d] = strides[d];
      geometry.dilations[d] = dilations[d];
    }
    Value source = cropToExtent(builder, loc, padded ? padded->source : input,
                                padded, extent, geometry);
    callee = (kCpuConv2D + suffix).str();
    writeLowOutput();
    memrefs = {source, filter, output};
  }
  call();
  if (padded)
    for (Operation *op : padded->ops)
      op->erase();
}

//===----------------------------------------------------------------------===//
// Epilogues
//===----------------------------------------------------------------------===//

/// The elementwise op after a matmul that a library call computes with the
/// product: `generic` computes `addf(product, bias)`.
struct Epilogue {
  linalg::GenericOp generic;
  Value bias;
};

/// Whether `map` is the identity of `rank` loops.
bool isIdentity(AffineMap map, unsigned rank) {
  return map.isIdentity() && map.getNumDims() == rank;
}

/// The bias `generic` adds to `product` (an f32 output, read through an
/// identity map), if it is an epilogue the runtime takes: all loops
/// parallel, an f32 output of the product's shape through an identity map
/// whose value the body does not read, and a body of exactly
/// `addf(product, bias)` (either order), `bias` an f32 input along the last
/// loop.
std::optional<Epilogue> matchEpilogue(linalg::GenericOp generic,
                                      Value product) {
  auto type = cast<MemRefType>(product.getType());
  unsigned rank = type.getRank();
  if (generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getNumLoops() != rank)
    return std::nullopt;
  OpOperand *init = generic.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(init->get().getType());
  if (!outputType || outputType.getShape() != type.getShape() ||
      !outputType.getElementType().isF32() ||
      !isIdentity(generic.getMatchingIndexingMap(init), rank) ||
      !generic.getMatchingBlockArgument(init).use_empty())
    return std::nullopt;
  // The block argument that reads the product, through an identity map.
  Block *body = generic.getBody();
  BlockArgument productArgument;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (input->get() != product)
      continue;
    if (productArgument ||
        !isIdentity(generic.getMatchingIndexingMap(input), rank))
      return std::nullopt;
    productArgument = generic.getMatchingBlockArgument(input);
  }
  if (!productArgument || body->getOperations().size() != 2)
    return std::nullopt;
  auto add = cast<linalg::YieldOp>(body->getTerminator())
                 .getValues()[0]
                 .getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value other = add.getLhs() == productArgument ? add.getRhs() : add.getLhs();
  auto bias = dyn_cast<BlockArgument>(other);
  if (!bias || bias.getOwner() != body || bias == productArgument ||
      (add.getLhs() != productArgument && add.getRhs() != productArgument) ||
      bias.getArgNumber() >= generic.getNumDpsInputs() ||
      !bias.getType().isF32())
    return std::nullopt;
  OpOperand *input = generic.getDpsInputOperand(bias.getArgNumber());
  AffineMap map = generic.getMatchingIndexingMap(input);
  if (map.getNumResults() != 1 ||
      map.getResult(0) != getAffineDimExpr(rank - 1, map.getContext()))
    return std::nullopt;
  return Epilogue{generic, input->get()};
}

/// The epilogue of a matmul `op` whose f32 output `product` it overwrites,
/// and the op before which the fused call goes (see the pass's
/// description), if one can be fused.
std::optional<std::pair<Epilogue, Operation *>>
findEpilogue(linalg::LinalgOp op, Value product, DominanceInfo &dominance) {
  // The readers of the product: one generic, and deallocations.
  linalg::GenericOp generic;
  for (Operation *user : product.getUsers()) {
    if (user == op.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto reader = dyn_cast<linalg::GenericOp>(user);
    if (!reader || (generic && generic != reader))
      return std::nullopt;
    generic = reader;
  }
  if (!generic || generic->getBlock() != op->getBlock() ||
      !op->isBeforeInBlock(generic))
    return std::nullopt;
  std::optional<Epilogue> epilogue = matchEpilogue(generic, product);
  if (!epilogue)
    return std::nullopt;
  Value output = generic.getDpsInits()[0];
  // A product in a function argument stays unless the epilogue overwrites
  // it; operands of the epilogue may not be views of the output.
  bool inPlace = getRoot(output) == product;
  if (!inPlace && !product.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  Value outputRoot = getRoot(output);
  Value biasRoot = getRoot(epilogue->bias);
  if (mayAlias(biasRoot, outputRoot) || mayAlias(biasRoot, product))
    return std::nullopt;
  // At the generic, if the matmul's inputs keep their values until there.
  SmallVector<Value> inputs;
  for (Value input : op.getDpsInputs())
    inputs.push_back(getRoot(input));
  if (!anyBetweenMayAccess(op, generic, inputs, /*writesOnly=*/true))
    return std::make_pair(*epilogue, generic.getOperation());
  // At the matmul, if the output and the bias are there, nothing in between
  // reads or writes the output, and nothing writes the bias.
  if (dominance.properlyDominates(output, op) &&
      dominance.properlyDominates(epilogue->bias, op) &&
      !anyBetweenMayAccess(op, generic, outputRoot, /*writesOnly=*/false) &&
      !anyBetweenMayAccess(op, generic, biasRoot, /*writesOnly=*/true))
    return std::make_pair(*epilogue, op.getOperation());
  return std::nullopt;
}

/// Erases `buffer`, a memref.alloc, and its deallocations once nothing
/// else uses it.
void eraseIfDead(Value buffer) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || llvm::any_of(buffer.getUsers(), [](Operation *user) {
        return !isa<memref::DeallocOp>(user);
      }))
    return;
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    user->erase();
  alloc.erase();
}

/// Erases `view` and the views it is made from while nothing reads them.
void eraseUnreadViews(Value view) {
  while (auto op = view.getDefiningOp<ViewLikeOpInterface>()) {
    if (!view.use_empty())
      return;
    view = op.getViewSource();
    op->erase();
  }
}

/// Erases the buffers that nothing reads, with the fills and transposes
/// that write them (the copies that weight gradients now read in place),
/// the views those read from and nothing else does, and their reshapes and
/// deallocations.
void eraseUnreadBuffers(ModuleOp module) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    SmallVector<Value> views{alloc.getResult()};
    SmallVector<Operation *> writes;
    bool read = false;
    for (size_t i = 0; i < views.size() && !read; ++i) {
      for (OpOperand &use : views[i].getUses()) {
        Operation *user = use.getOwner();
        if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user))
          views.push_back(user->getResult(0));
        else if (isa<memref::DeallocOp>(user) ||
                 (isa<linalg::TransposeOp, linalg::FillOp>(user) &&
                  cast<DestinationStyleOpInterface>(user).isDpsInit(&use)))
          writes.push_back(user);
        else
          read = true;
      }
    }
    if (read)
      continue;
    for (Operation *write : writes) {
      SmallVector<Value> sources(write->getOperands());
      write->erase();
      for (Value source : sources)
        eraseUnreadViews(source);
    }
    for (Value view : llvm::reverse(views))
      view.getDefiningOp()->erase();
  }
}

struct LinalgToCPULibraryPass
    : public amp::impl::AmpLinalgToCPULibraryBase<LinalgToCPULibraryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LibraryCallBuilder calls(module);
    DominanceInfo dominance(module);
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    // Generics fused into calls, erased before the walk reaches them.
    DenseSet<Operation *> erased;
    for (linalg::LinalgOp op : ops) {
      if (erased.contains(op.getOperation()) || !op.hasPureBufferSemantics())
        continue;
      StringRef suffix = getEntrySuffix(op);
      if (suffix.empty())
        continue;
      OpBuilder builder(op);
      Location loc = op.getLoc();
      if (std::optional<MatmulPlan> plan = planMatmul(op)) {
        SmallVector<AffineMap> maps = op.getIndexingMapsArray();
        Value accumulate = takeAccumulation(builder, op);
        Value product = op.getDpsInits()[0];
        Type inputType = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
        // Epilogues read the product in the output's own layout.
        bool overwrites =
            matchPattern(accumulate, m_Zero()) &&
            llvm::all_of(llvm::enumerate(plan->c), [&](auto position) {
              return maps[2].getDimPosition(position.index()) ==
                     position.value();
            });
        auto view = [&](Value operand, unsigned index,
                        ArrayRef<unsigned> order) {
          return viewInOrder(builder, loc, operand, maps[index], order);
        };
        // The low output type the product's readers truncate it to.
        if (epilogues && overwrites && !inputType.isF32()) {
          if (std::optional<SmallVector<linalg::GenericOp>> readers =
                  findTruncatingReaders(op, product, inputType)) {
            Value low = lowerOutputType(builder, product, inputType, *readers,
                                        erased);
            calls.call(builder, loc,
                       (kCpuMatmul + suffix + "To" + suffix).str(),
                       {view(op.getDpsInputs()[0], 0, plan->a),
                        view(op.getDpsInputs()[1], 1, plan->b),
                        view(low, 2, plan->c)},
                       {});
            op.erase();
            product.getDefiningOp()->erase();
            accumulate.getDefiningOp()->erase();
            continue;
          }
        }
        // A bias, at the matmul or at the generic.
        if (epilogues && overwrites) {
          if (auto found = findEpilogue(op, product, dominance)) {
            auto [epilogue, at] = *found;
            builder.setInsertionPoint(at);
            calls.call(builder, loc, (kCpuMatmul + suffix + "Bias").str(),
                       {view(op.getDpsInputs()[0], 0, plan->a),
                        view(op.getDpsInputs()[1], 1, plan->b),
                        view(epilogue.generic.getDpsInits()[0], 2, plan->c),
                        epilogue.bias},
                       {});
            erased.insert(epilogue.generic);
            epilogue.generic.erase();
            op.erase();
            eraseIfDead(product);
            accumulate.getDefiningOp()->erase();
            continue;
          }
        }
        Value a = view(op.getDpsInputs()[0], 0, plan->a);
        Value b = view(op.getDpsInputs()[1], 1, plan->b);
        Value c = view(product, 2, plan->c);
        calls.call(builder, loc, (kCpuMatmul + suffix).str(), {a, b, c},
                   {accumulate});
        op.erase();
        continue;
      }
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
        lowerConvolution(calls, conv, suffix, epilogues, erased);
    }
    eraseUnreadBuffers(module);
  }
};

} // namespace
