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
// padding instead of a copy.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The suffix of the runtime's entry points for inputs of `type` into f32
/// outputs ("F32", "F16", "BF16"), or empty when the runtime has none.
StringRef getEntrySuffix(Type input, Type output) {
  if (!output.isF32())
    return {};
  if (input.isF32())
    return "F32";
  if (input.isF16())
    return "F16";
  if (input.isBF16())
    return "BF16";
  return {};
}

/// The suffix of a linalg op's entry points, when it is a matmul, batch
/// matmul or 2-d convolution whose two inputs share a type the runtime takes.
StringRef getEntrySuffix(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
          op.getOperation()))
    return {};
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  return a == b ? getEntrySuffix(a, c) : StringRef();
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

/// Whether two roots are different memory: distinct values, one of them a
/// fresh allocation.
bool areDisjoint(Value root, Value other) {
  return root != other && (root.getDefiningOp<memref::AllocOp>() ||
                           other.getDefiningOp<memref::AllocOp>());
}

/// Whether an op leaves the memory that `root` views as it was: it writes
/// nothing, or only memory disjoint from it.
bool leavesUnchanged(Operation *op, Value root) {
  if (isMemoryEffectFree(op) || isa<memref::AllocOp>(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || (op->getNumRegions() && !isa<linalg::LinalgOp>(op)))
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::all_of(instances, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
      return true;
    return e.getValue() && areDisjoint(getRoot(e.getValue()), root);
  });
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
  Value sourceRoot = getRoot(source);
  for (Operation *op = copy->getNextNode(); op != reader; op = op->getNextNode())
    if (!leavesUnchanged(op, sourceRoot))
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

/// The runtime's convolution of `input` (N x C x H x W; its zero padding,
/// when `padded`, taken from the source instead) read over `extent[d]`
/// positions along spatial dimension d: the input itself, or a view
/// cropped to what the convolution reads; `geometry`'s padding set to
/// match.
Value cropToExtent(OpBuilder &builder, Location loc, Value input,
                   const std::optional<ZeroPadded> &padded,
                   const int64_t extent[2], Geometry &geometry) {
  Value source = padded ? padded->source : input;
  auto type = cast<MemRefType>(source.getType());
  SmallVector<int64_t> sizes(type.getShape());
  for (int d = 0; d < 2; ++d) {
    int64_t low = padded ? padded->low[d] : 0;
    int64_t size = std::min(sizes[2 + d], extent[d] - low);
    geometry.low[d] = low;
    geometry.high[d] = extent[d] - low - size;
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

/// Whether the convolution `op` is a weight gradient as torch-mlir writes
/// one: its filter window (an output gradient's image) is larger than its
/// output image (a filter's), so that oneDNN's weight-gradient kernels,
/// which reduce over images, do less work than its forward ones would.
bool isWeightGradient(linalg::LinalgOp op) {
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (failed(dims) || llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  int64_t window = 1, image = 1;
  for (unsigned loop : dims->filterLoop)
    window *= ranges[loop];
  for (unsigned loop : dims->outputImage)
    image *= ranges[loop];
  return window > image;
}

/// Replaces the convolution `conv` (accumulating into its output when
/// `accumulate`) by a call of the runtime: oneDNN's weight gradient,
/// input gradient or forward convolution, whichever `conv`'s geometry is.
void lowerConvolution(LibraryCallBuilder &calls, linalg::Conv2DNchwFchwOp conv,
                      StringRef suffix) {
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
      callee = ("ampCpuConv2DBackwardData" + suffix).str();
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
    callee = ("ampCpuConv2D" + suffix).str();
    memrefs = {input, filter, output};
  } else if (isWeightGradient(conv)) {
    // out[c, f, i, j] = sum_{n, p, q} in[c, n, i*s + p*d, ..] * w[f, n, p, q]
    // is the gradient of filter f x c of a convolution of image n with
    // stride d and dilation s (linalg's), whose output gradient is w.
    for (int d = 0; d < 2; ++d) {
      extent[d] = getReadExtent(filterShape[2 + d], outputShape[2 + d],
                                dilations[d], strides[d]);
      geometry.strides[d] = dilations[d];
      geometry.dilations[d] = strides[d];
    }
    Value source = cropToExtent(builder, loc, input, padded, extent, geometry);
    callee = ("ampCpuConv2DBackwardWeights" + suffix).str();
    memrefs = {swapFirstTwo(builder, loc, source),
               swapFirstTwo(builder, loc, filter),
               swapFirstTwo(builder, loc, output)};
  } else {
    for (int d = 0; d < 2; ++d) {
      extent[d] = getReadExtent(outputShape[2 + d], filterShape[2 + d],
                                strides[d], dilations[d]);
      geometry.strides[d] = strides[d];
      geometry.dilations[d] = dilations[d];
    }
    Value source = cropToExtent(builder, loc, input, padded, extent, geometry);
    callee = ("ampCpuConv2D" + suffix).str();
    memrefs = {source, filter, output};
  }
  call();
  if (padded)
    for (Operation *op : padded->ops)
      op->erase();
}

struct LinalgToCPULibraryPass
    : public amp::impl::AmpLinalgToCPULibraryBase<LinalgToCPULibraryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LibraryCallBuilder calls(module);
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics())
        continue;
      StringRef suffix = getEntrySuffix(op);
      if (suffix.empty())
        continue;
      OpBuilder builder(op);
      Location loc = op.getLoc();
      if (std::optional<MatmulPlan> plan = planMatmul(op)) {
        SmallVector<AffineMap> maps = op.getIndexingMapsArray();
        Value accumulate = takeAccumulation(builder, op);
        Value a = viewInOrder(builder, loc, op.getDpsInputs()[0], maps[0],
                              plan->a);
        Value b = viewInOrder(builder, loc, op.getDpsInputs()[1], maps[1],
                              plan->b);
        Value c = viewInOrder(builder, loc, op.getDpsInits()[0], maps[2],
                              plan->c);
        calls.call(builder, loc, ("ampCpuMatmul" + suffix).str(), {a, b, c},
                   {accumulate});
        op.erase();
        continue;
      }
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
        lowerConvolution(calls, conv, suffix);
    }
  }
};

} // namespace
