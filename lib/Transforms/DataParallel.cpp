//===- DataParallel.cpp - Sum the gradients of every rank over MPI --------===//
//
// Implements `amp-data-parallel` and DataParallel.h. The collectives are
// `mpi` dialect ops on memrefs, between tensors: a read-only
// `bufferization.to_buffer` of the packed bucket is the send buffer, a fresh
// `memref.alloc` turned back into a tensor by `to_tensor restrict writable`
// the receive buffer (MPI forbids aliasing the two without MPI_IN_PLACE,
// which the mpi dialect cannot express). Buckets are 1-D: MPIToLLVM counts
// the elements of dimension 0 only.
//
//===----------------------------------------------------------------------===//

#include "amp/Transforms/DataParallel.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"
#include <algorithm>
#include <limits>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPDATAPARALLEL
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// The DLTI key through which MPIToLLVM picks the MPI ABI.
static constexpr llvm::StringLiteral kMpiImplementationKey =
    "MPI:Implementation";
/// MPIToLLVM passes element counts as C ints.
static constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

llvm::Expected<DataParallelConfig>
DataParallelConfig::get(StringRef gradCommDtype, int64_t bucketSize) {
  std::optional<Precision> comm = symbolizePrecision(gradCommDtype);
  if (!comm)
    return llvm::createStringError("option 'grad-comm-dtype' must be f32, "
                                   "f16 or bf16, got '" +
                                   gradCommDtype + "'");
  if (bucketSize < 1)
    return llvm::createStringError(
        "option 'bucket-size' must be a number of bytes >= 1, got " +
        Twine(bucketSize));
  return DataParallelConfig{*comm, bucketSize};
}

bool amp::hasSummedGradients(Operation *update) {
  return update->hasAttr(AmpDialect::kDataParallelAttrName);
}

Value amp::buildWorldSize(OpBuilder &builder, Location loc) {
  Value world = mpi::CommWorldOp::create(
      builder, loc, mpi::CommType::get(builder.getContext()));
  Value size = mpi::CommSizeOp::create(builder, loc, /*retval=*/Type(),
                                       builder.getI32Type(), world)
                   .getSize();
  return arith::SIToFPOp::create(builder, loc, builder.getF32Type(), size);
}

LogicalResult amp::requireMpichAbi(ModuleOp module) {
  MLIRContext *context = module.getContext();
  FailureOr<Attribute> existing = dlti::query(module, {kMpiImplementationKey});
  if (succeeded(existing)) {
    auto name = dyn_cast<StringAttr>(*existing);
    if (name && name.getValue() == "MPICH")
      return success();
    return module.emitError("the module's DLTI spec sets \"")
           << kMpiImplementationKey << "\" to " << *existing
           << ", but the MPI runtime of amp-data-parallel's steps is built "
              "for MPICH's ABI";
  }
  auto entry = DataLayoutEntryAttr::get(StringAttr::get(context,
                                                        kMpiImplementationKey),
                                        StringAttr::get(context, "MPICH"));
  // A query reads the data layout spec when there is one, else the map.
  if (auto spec = module->getAttrOfType<DataLayoutSpecAttr>(
          DLTIDialect::kDataLayoutAttrName)) {
    SmallVector<DataLayoutEntryInterface> entries(spec.getEntries());
    entries.push_back(entry);
    module->setAttr(DLTIDialect::kDataLayoutAttrName,
                    DataLayoutSpecAttr::get(context, entries));
    return success();
  }
  SmallVector<DataLayoutEntryInterface> entries;
  if (auto map = module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName))
    llvm::append_range(entries, map.getEntries());
  entries.push_back(entry);
  module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(context, entries));
  return success();
}

namespace {

/// A gradient's elements within a bucket.
struct Slot {
  Value grad;
  int64_t offset;
  int64_t numElements;
};

struct Bucket {
  SmallVector<Slot> slots;
  int64_t numElements = 0;
};

/// Consecutive gradients in buckets of at most `capacity` elements; a
/// larger gradient has a bucket of its own.
SmallVector<Bucket> planBuckets(ArrayRef<Value> grads, int64_t capacity) {
  SmallVector<Bucket> buckets;
  for (Value grad : grads) {
    int64_t n = cast<RankedTensorType>(grad.getType()).getNumElements();
    if (buckets.empty() ||
        (buckets.back().numElements > 0 &&
         buckets.back().numElements + n > capacity))
      buckets.emplace_back();
    Bucket &bucket = buckets.back();
    bucket.slots.push_back({grad, bucket.numElements, n});
    bucket.numElements += n;
  }
  return buckets;
}

/// `value` (float) converted to `type`: extended or rounded to nearest even;
/// between the two 16-bit types through f32.
Value convertFloat(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto from = cast<FloatType>(value.getType());
  if (from == type)
    return value;
  if (from.getWidth() == type.getWidth()) {
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    from = b.getF32Type();
  }
  if (from.getWidth() < type.getWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

/// The 1-D tensor `input` converted element by element into `init`.
Value convertInto(OpBuilder &b, Location loc, Value input, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  AffineMap identity = b.getDimIdentityMap();
  auto generic = linalg::GenericOp::create(
      b, loc, type, input, init, ArrayRef<AffineMap>{identity, identity},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value converted = convertFloat(
            nb, nloc, args[0], cast<FloatType>(type.getElementType()));
        linalg::YieldOp::create(nb, nloc, converted);
      });
  return generic.getResult(0);
}

/// The reassociation between a tensor of `rank` and its 1-D form: all
/// dimensions in one group; none for rank 0 (one element).
SmallVector<ReassociationIndices> getFlatReassociation(int64_t rank) {
  if (rank == 0)
    return {};
  ReassociationIndices all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  return {all};
}

/// `value` as a 1-D tensor of its elements (a reshape, not a copy).
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  SmallVector<ReassociationIndices> groups =
      getFlatReassociation(type.getRank());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value, groups);
  return tensor::CollapseShapeOp::create(b, loc, flat, value, groups);
}

/// The 1-D tensor `flat` reshaped to `type`.
Value unflatten(OpBuilder &b, Location loc, Value flat,
                RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> groups =
      getFlatReassociation(type.getRank());
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, groups);
  return tensor::ExpandShapeOp::create(b, loc, type, flat, groups);
}

/// The gradients of `bucket`, flattened and converted to `comm`, one after
/// the other in one 1-D tensor.
Value pack(OpBuilder &b, Location loc, const Bucket &bucket, FloatType comm) {
  Value packed = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{bucket.numElements}, comm);
  for (const Slot &slot : bucket.slots) {
    Value flat = flatten(b, loc, slot.grad);
    SmallVector<OpFoldResult> offset{b.getIndexAttr(slot.offset)},
        size{b.getIndexAttr(slot.numElements)}, stride{b.getIndexAttr(1)};
    if (getElementTypeOrSelf(flat.getType()) != comm) {
      Value place =
          tensor::ExtractSliceOp::create(b, loc, packed, offset, size, stride);
      flat = convertInto(b, loc, flat, place);
    }
    packed = tensor::InsertSliceOp::create(b, loc, flat, packed, offset, size,
                                           stride);
  }
  return packed;
}

/// The sum over the ranks of `packed` (1-D), as `mpi.allreduce` between
/// buffers.
Value allReduce(OpBuilder &b, Location loc, Value packed, Value world) {
  auto type = cast<RankedTensorType>(packed.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value send = bufferization::ToBufferOp::create(b, loc, memrefType, packed,
                                                 b.getUnitAttr());
  Value receive = memref::AllocOp::create(b, loc, memrefType);
  mpi::AllReduceOp::create(b, loc, /*retval=*/Type(), send, receive,
                           mpi::MPI_ReductionOpEnum::MPI_SUM, world);
  return bufferization::ToTensorOp::create(b, loc, type, receive,
                                           b.getUnitAttr(), b.getUnitAttr());
}

/// Each gradient of `bucket` read back from `reduced`, in its own type and
/// shape.
SmallVector<Value> unpack(OpBuilder &b, Location loc, Value reduced,
                          const Bucket &bucket) {
  SmallVector<Value> grads;
  for (const Slot &slot : bucket.slots) {
    auto type = cast<RankedTensorType>(slot.grad.getType());
    Value part = reduced;
    if (slot.numElements != bucket.numElements)
      part = tensor::ExtractSliceOp::create(
          b, loc, reduced, ArrayRef<OpFoldResult>{b.getIndexAttr(slot.offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(slot.numElements)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    if (getElementTypeOrSelf(part.getType()) != type.getElementType())
      part = convertInto(b, loc, part,
                         tensor::EmptyOp::create(
                             b, loc, ArrayRef<int64_t>{slot.numElements},
                             type.getElementType()));
    grads.push_back(unflatten(b, loc, part, type));
  }
  return grads;
}

/// The distinct gradients of `updates`, in order; an error at the update of
/// one the buckets cannot hold.
FailureOr<SmallVector<Value>> collectGradients(ArrayRef<UpdateOp> updates) {
  llvm::SetVector<Value> grads;
  for (UpdateOp update : updates)
    for (auto [index, grad] : llvm::enumerate(update.getGrads())) {
      auto type = dyn_cast<RankedTensorType>(grad.getType());
      if (!type || !isa<FloatType>(type.getElementType()) ||
          !type.hasStaticShape())
        return update.emitOpError("gradient #")
               << index << " has type " << grad.getType()
               << "; amp-data-parallel packs gradients into buckets, which "
                  "needs float tensors of static shape";
      if (type.getNumElements() > kMaxCount)
        return update.emitOpError("gradient #")
               << index << " has " << type.getNumElements()
               << " elements, more than one MPI call takes (" << kMaxCount
               << ")";
      grads.insert(grad);
    }
  return SmallVector<Value>(grads.getArrayRef());
}

} // namespace

FailureOr<GradientReduction>
amp::allReduceGradients(func::FuncOp func, const DataParallelConfig &config) {
  FailureOr<SmallVector<UpdateOp>> updates = collectStepUpdates(func);
  if (failed(updates))
    return failure();
  GradientReduction reduction;
  if (updates->empty())
    return reduction;
  UpdateOp last = updates->back();
  if (failed(checkStateUsedAfter(*updates, last)))
    return failure();
  FailureOr<SmallVector<Value>> grads = collectGradients(*updates);
  if (failed(grads))
    return failure();

  FloatType comm = getFloatType(func.getContext(), config.commPrecision);
  int64_t elementBytes = comm.getWidth() / 8;
  int64_t capacity =
      std::clamp<int64_t>(config.bucketSize / elementBytes, 1, kMaxCount);
  OpBuilder b(last);
  Location loc = last.getLoc();
  Value world =
      mpi::CommWorldOp::create(b, loc, mpi::CommType::get(b.getContext()));
  llvm::DenseMap<Value, Value> summed;
  for (const Bucket &bucket : planBuckets(*grads, capacity)) {
    Value reduced = allReduce(b, loc, pack(b, loc, bucket, comm), world);
    for (auto [slot, grad] :
         llvm::zip_equal(bucket.slots, unpack(b, loc, reduced, bucket)))
      summed[slot.grad] = grad;
    reduction.bucketElements.push_back(bucket.numElements);
    reduction.bytes += bucket.numElements * elementBytes;
  }

  // The updates read the sums, so they all come after the collectives.
  for (UpdateOp update : *updates) {
    for (OpOperand &grad : update.getGradsMutable())
      grad.set(summed.lookup(grad.get()));
    update->setAttr(AmpDialect::kDataParallelAttrName, b.getStringAttr("mpi"));
    if (update != last)
      update->moveBefore(last);
  }
  return reduction;
}

namespace {

struct DataParallelPass
    : public amp::impl::AmpDataParallelBase<DataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<DataParallelConfig> config =
        DataParallelConfig::get(gradCommDtype, bucketSize);
    if (!config) {
      emitError(module.getLoc()) << llvm::toString(config.takeError());
      return signalPassFailure();
    }
    bool failedStep = false, reduced = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<GradientReduction> reduction =
          allReduceGradients(func, *config);
      failedStep |= failed(reduction);
      reduced |= succeeded(reduction) && !reduction->bucketElements.empty();
    }
    if (failedStep || (reduced && failed(requireMpichAbi(module))))
      signalPassFailure();
  }
};

} // namespace
