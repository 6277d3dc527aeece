//===- Passes.td - GPU lowering passes ---------------------*- tablegen -*-===//
//
// The passes of amp-lower-to-nvvm (lib/Pipelines/GPULowering.cpp, in
// pipeline order) and amp-lower-to-llvm (lib/Pipelines/CPULowering.cpp) that
// upstream MLIR has no equivalent of.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpSinkTensorExtracts : Pass<"amp-sink-tensor-extracts",
                                 "func::FuncOp"> {
  let summary = "Move scalar reads of tensors into the linalg.generic ops "
                "that use them";
  let description = [{
    On the GPU every tensor lives in device memory, so a `tensor.extract`
    whose scalar the step computes with on the host (an Adam bias correction
    `1 - beta^t` from a step counter, say) would read device memory from the
    host. This pass moves the read to where the scalar is used: each
    `linalg.generic` whose body uses the extracted scalar, or a value
    computed from it by pure scalar ops, gets the tensor as one more input
    (indexing map to the constant indices), and the scalar ops are cloned
    into its body. The host copies are erased.

    The indices must be constants. A scalar that reaches anything but
    pure scalar ops and `linalg.generic` bodies is an error.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def AmpFuseElementwise : Pass<"amp-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise linalg.generic producers into their "
                "consumers";
  let description = [{
    An all-parallel `linalg.generic` whose result has one use, by another
    `linalg.generic` (a cast of the AMP pipeline, an elementwise op, a
    reduction), is computed inside that consumer
    (`linalg::populateElementwiseOpsFusionPatterns`): one loop nest instead
    of two and no buffer in between. On the GPU every generic is a kernel,
    so this is fewer launches too; on the CPU, fewer passes over memory.
    Named ops are left as they are: unlike `linalg-fuse-elementwise-ops`,
    which also propagates reshapes, this pass never turns a `linalg.matmul`
    into a generic, so every contraction still reaches the library
    (cuBLASLt, oneDNN). The fused body computes exactly what the two did,
    casts included.

    A producer with several uses is fused too when computing it again in
    each consumer costs less than its buffer: a result of at least 4096
    elements, at most 8 arith ops, at most one input read whole (the others
    broadcast), and two uses, each an input of a `linalg.generic`, so that
    its buffer goes once both have taken it (more consumers made steps
    compile much longer for no faster step). BatchNorm's `x - mean`,
    read by the variance's sum of squares and by the normalization, is one:
    each pass over the activation then reads it alone. A producer that
    widens the input it reads whole (a bf16 image into f32) may have up to
    four readers, each of which then reads fewer bytes than the buffer
    would hold: a bf16 step's `x - mean`, which the backward reads too.
    These fusions run first, producers before consumers and to a fixpoint,
    so a producer is judged with the casts it took in; the fusion into
    first readers below runs after them. No producer goes into a consumer
    that reads it broadcast: a scalar (Adam's bias correction `1 - beta^t`)
    would be computed again for every element.

    With `keep-product-casts` (the CPU pipeline's), a cast of a matmul's or
    convolution's result, read whole, stays its own op:
    `amp-linalg-to-cpu-library` has the library write the cast type in its
    place, and every reader reads the low type.

    Any other producer with several uses is computed in one loop nest with
    its first reader, when that reader is elementwise over the producer's
    elements (one each, no broadcast), in the same block, reads it through
    one operand, and comes before every other user: the fused op takes the
    reader's place and also writes the producer's results, which the later
    users read (`linalg::fuseElementwiseOps` with its results kept). The
    reader no longer reads them back, and the next reader may take the
    fused op in turn. A cast to bf16 of an activation the backward reads in
    f32, and Adam's moments read by the parameter's update, go this way: the
    GPT block's loops move 12% fewer bytes.
  }];
  let options = [
    Option<"keepProductCasts", "keep-product-casts", "bool",
           /*default=*/"false",
           "Leave a cast of a matmul's or convolution's result unfused, for "
           "a library call to write the cast type">,
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def AmpDropContractAttributes : Pass<"amp-drop-contract-attributes",
                                     "ModuleOp"> {
  let summary = "Drop the contract's amp.* argument and result attributes";
  let description = [{
    The contract's attributes on arguments and results (`amp.name`,
    `amp.state`, `amp.init`, `amp.value`, ...) are for the runners, which
    read them before lowering. Both lowerings drop them from every function
    first: results becoming out-parameters would carry them onto arguments,
    where the amp dialect's verifier rejects them (`amp.state =
    "found_inf"` names no argument), and LLVM has no use for them.
  }];
}

def AmpOneHotMatmulToGather : Pass<"amp-one-hot-matmul-to-gather",
                                   "func::FuncOp"> {
  let summary = "Embedding lookups written as one-hot products become "
                "gathers and scatter-adds";
  let description = [{
    Front ends that cannot express a gather and its gradient (a scatter)
    write an embedding lookup as a product with a one-hot matrix: entry
    [i, v] is 1 where index i equals v, else 0 (`amp_mlir.torch` does, since
    torch-mlir's scatter has no MLIR 22 lowering). That is
    2 x tokens x vocabulary x width multiply-adds per lookup and as many for
    its gradient, most of them by zero: for a vocabulary of 50k the product
    would outweigh the rest of the model.

    This pass finds `linalg.matmul`s on tensors into a zero fill whose first
    operand is such a matrix (a `linalg.generic` computing `cmpi eq` of an
    integer input read along the rows and the column's index, a
    `linalg.index` or an iota, through casts that keep 0 and 1 and through
    the elementwise generics feeding it) and rewrites

    - `onehot . table` into a gather, `out[i, j] = table[index[i], j]`;
    - `transpose(onehot) . gradient` (the lookup's gradient) into a loop
      over the rows i in order, adding row i of `gradient` into row
      `index[i]` of the zero output.

    An index that names no row (negative, or past the table) gives a zero
    row and adds nothing, as the product does. The gather is exact; the
    scatter-add sums the same f32 terms in the rows' order. The product
    differs in one way: an inf or NaN in a row of the table that no index
    selects made every output of its column NaN (0 x inf), and the lookup
    does not.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
}

def AmpMergeEqualReductions : Pass<"amp-merge-equal-reductions",
                                    "func::FuncOp"> {
  let summary = "Compute a reduction once where a block computes it twice";
  let description = [{
    torch-mlir's BatchNorm sums (x - mean)^2 twice over each activation: once
    into a 1 x C x 1 x 1 tensor for the batch variance and once into a C
    tensor for the running variance, the same sums in the same order. This
    pass finds a `linalg.generic` reduction on tensors into a fill that
    computes what an earlier one in its block does (the same inputs through
    the same maps, the same loops and body, a fill of the same value, the
    same output dimensions up to unit ones) and replaces its result by a
    `tensor.collapse_shape` or `tensor.expand_shape` of the earlier one's.
    One pass over the activation less per BatchNorm; the same bits. It runs
    before `amp-fuse-elementwise`, so that `x - mean`, read then only by one
    sum and the normalization, can be computed in each of them.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def AmpFuseSiblingReductions : Pass<"amp-fuse-sibling-reductions",
                                     "func::FuncOp"> {
  let summary = "Compute reductions that read one tensor in one pass over it";
  let description = [{
    A BatchNorm's backward sums the output gradient, and twice its product
    with `x - mean`, in three `linalg.generic` reductions over the same loops
    (a LayerNorm's backward two): three passes over two activations. This
    pass replaces two reductions on tensors in one block that run the same
    static loops and read one tensor whole through the same map by one
    generic with the results of both, at the place of the earlier one: the
    inputs of both (the shared ones once), the outputs of both, the two
    bodies one after the other. The ops the later one needs that sit between
    the two move above the earlier one first; it fuses nothing when the
    later one depends on the earlier one, or when such an op has memory
    effects. Each result is summed in the order it was: the same bits. It
    runs after `amp-fuse-elementwise`, whose producers are then already part
    of the reductions.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def AmpFillPerDestination : Pass<"amp-fill-per-destination", "func::FuncOp"> {
  let summary = "Give every op that writes into a filled tensor a fill of "
                "its own";
  let description = [{
    Front ends fill one zero tensor and use it as the initial value of many
    matmuls and reductions (torch-mlir does for every product of one
    shape). Bufferized, all but one of those ops would get a copy of the
    filled buffer. This pass gives each destination use of a `linalg.fill`
    with more than one use its own fill (of its own `tensor.empty`), right
    before the op: a fill instead of a copy, and a fill of zero right before
    a matmul is what the library lowerings fold into a product that
    overwrites its output instead of accumulating into it
    (`amp-linalg-to-cpu-library`, `amp-linalg-to-gpu-matmul`).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def AmpFoldTransposesIntoMatmuls : Pass<"amp-fold-transposes-into-matmuls",
                                        "func::FuncOp"> {
  let summary = "Read transposed matmul operands in place";
  let description = [{
    Front ends spell `x @ w.T` as a `linalg.transpose` of `w` into a new
    tensor followed by a `linalg.matmul` (torch-mlir does for every
    `nn.Linear` and in every backward): a copy of the weight per step. This
    pass makes a `linalg.matmul` or `linalg.batch_matmul` on tensors read a
    `linalg.transpose` result's input directly, through the composed
    indexing map (`indexing_maps` of the named op), and the transpose goes
    when nothing else reads it. The libraries the lowerings call read such
    operands as strided views (`amp-linalg-to-cpu-library`,
    `amp-linalg-to-gpu-matmul`), so the copy disappears; the product is the
    same.

    A batch matmul keeps its batch dimension first: a transpose that moves
    it stays.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def AmpCPUWidenLibraryOperands : Pass<"amp-cpu-widen-library-operands",
                                      "func::FuncOp"> {
  let summary = "Store the low-precision operands of library products in f32 "
                "where the library computes those products in f32";
  let description = [{
    On a CPU whose libraries have no bf16 (or f16) kernels faster than their
    f32 ones (AVX2 hosts such as AMD Zen 3: the CPU runtime's
    `ampCpuLowPrecisionPath` and `ampCpuConv2DLowPrecisionPath` say "f32"),
    the runtime extends every bf16 operand of a matmul or convolution to f32
    in each call: a weight's bf16 copy twice a step (the forward and the
    input gradient), an activation twice (the next layer and the weight
    gradient). This pass makes a `linalg.matmul` or `linalg.batch_matmul`
    on tensors whose two inputs are of one of `matmul-types`, and a
    `linalg.conv_2d_nchw_fchw` whose two inputs are of one of
    `convolution-types`, into an f32 output, read its inputs extended to
    f32 (`arith.extf`, exact): the library multiplies the same numbers, in
    f32, as after its own extension.

    The extension goes where the value is computed, so that the loop
    computing it (after `amp-fuse-elementwise`) stores it once, in f32,
    rounded to the low type. The ops that only move elements between there
    and the product (transposes, broadcasts, fills, pads, inserted slices,
    reshapes) move f32 values instead, so the library still reads
    transposed, padded and zero-interleaved operands in place. A slice
    taken out of a value is extended itself, unless the value is widened
    already, or is read by static slices alone that cover it without
    overlapping, each read by loops, products or reshapes (the q, k and v
    of an attention's projection): then the slices are taken out of the f32
    value, which then stores no more than their extensions would. The value's
    other readers read the f32 one: a loop that extends it reads it as it
    is, a loop that computes with it rounds it back (exactly) in its body,
    and any other op reads one exact rounding of it, made next to the
    extension.

    The cost is memory: a value the backward reads (an activation) is kept
    in f32 (docs/CPU.md, "Temporaries").
  }];
  let options = [
    ListOption<"matmulTypeNames", "matmul-types", "std::string",
               "The input types of matmuls and batch matmuls to widen: bf16, "
               "f16">,
    ListOption<"convolutionTypeNames", "convolution-types", "std::string",
               "The input types of convolutions to widen: bf16, f16">,
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def AmpCPUSplitReductions : Pass<"amp-cpu-split-reductions",
                                  "func::FuncOp"> {
  let summary = "Split large reductions with few outputs into partial "
                "results over their outer loops";
  let description = [{
    The CPU's parallel loops come from an op's parallel dims, and a sum to
    a few values (BatchNorm's statistics and their gradients: 16 or 32
    channels over a batch of images) has too few of them: it ran on one
    core while the others waited. This pass rewrites a `linalg.generic` on
    tensors with fewer than 256 outputs in parallel and at least 131072
    elements in all into two ops:

    - the op itself, with its outer reduction loops made parallel and put
      before its parallel loops, writing one partial result per iteration of
      them (a sum per image): loops become parallel from the outermost
      while the reduction loops left inside sum at least 256 elements into
      each partial. Outputs with one element per iteration (an unscaled
      gradient) are written in place;
    - per reduced output, an op accumulating the partial results into its
      original init, in their order, through a `tensor.collapse_shape`
      view of the init without its unit dims read at 0 (the linalg
      vectorizer takes no map with more results than loops, such as a
      keepdim output's `(0, c, 0, 0)` over the partials' two loops).

    The ops it may split are those of `amp-gpu-split-reductions` (static
    shapes, projected-permutation indexing maps, one combiner with a neutral
    element per reduced output). The split depends on the shapes only, not
    on `threads`: a step sums in the same order on any number of threads.
    That order is a sum per partial, then a sum of the partials: float sums
    round otherwise than an unsplit op's, with a smaller error bound (it
    grows with the length of a partial plus their number instead of with
    the whole length).
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def AmpGPUSplitReductions : Pass<"amp-gpu-split-reductions",
                                  "func::FuncOp"> {
  let summary = "Split large reductions with few outputs over many threads";
  let description = [{
    Every linalg op becomes one kernel with one thread per output element,
    so a reduction to a few values (the loss, and above all the fused
    unscale + inf/NaN check of each gradient, which also writes the unscaled
    gradient) would run on a handful of threads. This pass rewrites a
    `linalg.generic` on tensors with fewer than 1024 outputs in parallel and
    at least 512 elements reduced into each into two ops:

    - the op itself, with each reduction loop of size `serial * threads`
      split into a parallel loop over `threads` (inner) and a reduction loop
      over `serial` (outer; an `expand_shape` view of each operand, no copy):
      each thread reduces about 64 elements into a partial result, and
      neighbouring threads read neighbouring elements. Outputs with one
      element per iteration (an unscaled gradient) are written in place;
    - per reduced output, an op accumulating the partial results into its
      original init (split again while it is itself that large).

    Only static shapes, projected-permutation indexing maps (unit dims read
    at 0 allowed: a BatchNorm's keepdim sums, whose partial results and
    combining ops drop them), and outputs accumulated by one combiner with a
    neutral element (`addf`, `mulf`, `maximumf`, `ori`, ..., or `acc - x`,
    whose partials are added) are split; a size without a divisor near 64
    gets few threads (8198 = 2 x 4099: 2 threads of 4099 iterations), a
    prime size stays serial. Floating-point
    sums are reassociated (as on any parallel reduction); `found_inf`,
    max/min and the elementwise outputs are unchanged bit for bit.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def AmpGPUBufferize : Pass<"amp-gpu-bufferize", "ModuleOp"> {
  let summary = "Bufferize a step into device memory, with caller-allocated "
                "results";
  let description = [{
    One-shot bufferization of the whole module (function boundaries with
    identity layouts) whose allocations are `gpu.alloc` and copies
    `gpu.memcpy`, so that no buffer of the step is host memory:

    - a `linalg.fill` that several ops of its block write into is cloned
      before each of them first: one shared filled buffer would be copied
      for each of them,
      which costs what a fill does, and a matmul's own zero fill becomes
      `beta = 0` in `amp-linalg-to-gpu-matmul` (the transformer example:
      2 device copies per step instead of 45);
    - memref results become out-parameters allocated by the caller; a result
      computed into a fresh buffer is computed into the out-parameter
      directly, others (an argument returned as it is) are copied into it on
      the device;
    - tensor constants (host globals after bufferization) are copied into
      device buffers where they are used;
    - every `gpu.alloc` that does not leave its block is freed with
      `gpu.dealloc` before the block's terminator. A buffer that leaves its
      block (yielded by a loop or branch) is an error.
  }];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "gpu::GPUDialect", "memref::MemRefDialect"];
}

def AmpLinalgToCPULibrary : Pass<"amp-linalg-to-cpu-library", "ModuleOp"> {
  let summary = "Hand contractions and convolutions on memrefs to oneDNN";
  let description = [{
    Rewrites, on memrefs (after bufferization), `linalg.matmul` and
    `linalg.batch_matmul` (with any transposed indexing maps) and
    `linalg.conv_2d_nchw_fchw` whose two inputs are f32, f16 or bf16 and
    whose output is f32 into calls of the CPU runtime
    (`include/amp/ExecutionEngine/CpuRuntime.h`, over oneDNN):
    `ampCpuMatmul{F32,F16,BF16}` and `ampCpuConv2D{,BackwardWeights,BackwardData}{F32,F16,BF16}`,
    declared with `llvm.emit_c_interface`. Operands are passed as unranked
    memrefs of their own strides: a transposed operand is a
    `memref.transpose` view, never a copy. The product accumulates in f32
    into the output, as the linalg op does; a `linalg.fill` of zero into
    the output just before it is folded away (the call overwrites instead
    of accumulating).

    Which convolution primitive computes a convolution follows from its
    geometry (`linalg::inferConvolutionDims`): one whose filter window is
    larger than its output image is a weight gradient as torch-mlir writes
    it (input and output gradient with batch and channels swapped) and
    calls `convolution_backward_weights`, with linalg's stride and dilation
    as the forward's dilation and stride; a stride-1 convolution of an
    input that holds zeros except for one strided copy (an output gradient
    with the forward's stride interleaved) calls
    `convolution_backward_data` on the copy's source, with the filter
    rotated back by the runtime; the rest call `convolution_forward`.
    Zero padding around an input (a zero fill and one copy into its
    interior, with no other reader) becomes the call's padding, and the
    fill and copy go. A weight gradient's operands that torch-mlir copies
    with batch and channels swapped (a buffer that a `linalg.transpose`
    wrote whole last before the convolution, reshapes aside, from a dense
    buffer unchanged since) are read in place from the transpose's source;
    copies that nothing reads any more go with their transposes. Calls of
    the runtime's products and convolutions write only their output.

    Contractions of other types (outputs in the low type, integers, f64)
    stay loops.

    With `epilogues` (the default), a matmul, batch matmul or convolution
    that overwrites its f32 output (no accumulation) takes the elementwise
    code next to it into the call where the library computes exactly the
    same function:
    post-ops on the f32 product, then one conversion to the output's type.

    - `ampCpuMatmul{F16,BF16}To{F16,BF16}`: the output is a fresh buffer
      (`memref.alloc`) that only `linalg.generic` ops read, each only
      through `arith.truncf` to the inputs' type. The call writes a buffer
      of that type, which the readers read instead, without the `truncf`
      (a bf16 step's activations and input gradients). Where the one
      reader is a cast of the whole product into a fresh buffer that
      nothing uses before it, the call writes that buffer and the cast
      goes. Forward convolutions and input gradients likewise
      (`ampCpuConv2D{F16,BF16}To{F16,BF16}`,
      `ampCpuConv2DBackwardData{F16,BF16}To{F16,BF16}`): a low step's
      images.
    - `ampCpuMatmul{F32,F16,BF16}Bias`: the only reader of a fresh output
      is an elementwise `linalg.generic` computing `addf(product, bias)`
      into an f32 buffer of the same shape, `bias` an f32 vector along the
      last dimension; the call writes that buffer, and the generic and
      the f32 buffer go. The call takes the generic's place when the
      matmul's inputs are not written in between, else the matmul's when
      the generic's output and bias exist there and nothing in between
      reads or writes the output or writes the bias; otherwise nothing is
      fused. Buffers are told apart by the
    allocation or function argument they are views of: distinct function
    arguments are taken to be distinct buffers, as the runners pass them.

    Not fused: a bias added in the low type (a bf16 step adds the rounded
    product and the rounded bias and rounds again, which a post-op on the
    f32 product does not), ReLU and GELU (oneDNN's ReLU is max(x, 0),
    which turns a NaN into 0 where the IR's keeps it), SGD updates of a
    weight from its gradient (a post-op reading a whole f32 operand made
    the weight-gradient products twice as slow as the product and the
    separate loop together), and products that accumulate.
  }];
  let options = [
    Option<"epilogues", "epilogues", "bool", /*default=*/"true",
           "Fuse the elementwise code next to matmuls into the library "
           "calls where the library computes the same function (a low "
           "output type, a bias)">,
  ];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def AmpCPUChannelsLast : Pass<"amp-cpu-channels-last", "func::FuncOp"> {
  let summary = "Lay out the images of the runtime's convolutions "
                "channels-last";
  let description = [{
    Part of `amp-lower-to-llvm` (`channels-last=true`, with `library`), right
    after `amp-linalg-to-cpu-library`. oneDNN's convolutions compute in a
    blocked layout, nChw16c with AVX-512, into which the runtime reorders
    each N x C x H x W operand and from which it reorders each output back.
    Channels-last (NHWC) images need none: for 16 channels nChw16c is NHWC
    byte for byte, and wider ones the runtime hands oneDNN in that layout,
    whose kernels took 5-19% longer than the blocked ones on the benchmark
    CNN's 32-channel convolutions, less than the reorders they save.

    Taken are the static N x C x H x W allocations, C a multiple of 16 and
    more than one pixel, that the runtime's convolutions (`ampCpuConv2D*`)
    read or write as images (not filters), and, from them on, those that a
    linalg op or a copy reads or writes together with one taken already:
    the BatchNorm, ReLU, cast and residual code between convolutions. A
    buffer is taken only when each of its uses can read the new layout:
    linalg ops, copies, deallocations, casts to unranked memrefs that only
    the runtime's convolutions and products read (they take any strides),
    and subviews whose uses can.

    Such a buffer becomes an N x H x W x C allocation. Linalg ops read and
    write it through their indexing maps (copies and named ops become
    generics), and the loop over its channels moves innermost when it is
    parallel, the other loops keeping their order, so that every sum of the
    loops adds in the same order; the vector code then runs along
    contiguous channels. Their per-channel operands (1 x C x 1 x 1:
    BatchNorm's statistics and parameters) are read and written through
    1 x 1 x 1 x C views, one vector per tile. Other users get a
    `memref.transpose` view of it in the logical N x C x H x W order.

    The loops compute the same bits; the 16-channel convolutions too where
    oneDNN blocks channels by 16 (AVX-512: the same kernels), the others
    within rounding (oneDNN's channels-last kernels sum in another order).
    Where its kernels block channels by 8 (AVX2) no channels-last image is
    a blocked one, and the runtime hands it all of them as channels-last
    (`ampCpuChannelBlock` says which block the host's kernels have).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect"];
}

def AmpMPIToCPURuntime : Pass<"amp-mpi-to-cpu-runtime", "ModuleOp"> {
  let summary = "Hand the MPI ops MPIToLLVM cannot lower to the MPI runtime";
  let description = [{
    The collectives of a data-parallel step (`amp-data-parallel`) on
    memrefs, after bufferization, for the CPU. `MPIToLLVM` (in
    `convert-to-llvm`) lowers `mpi.comm_world` and f32 `mpi.allreduce` to
    MPICH calls; this pass takes what it cannot lower, into calls of
    libAmpMpiRuntime (`include/amp/ExecutionEngine/MpiRuntime.h`, declared
    with `llvm.emit_c_interface`):

    - `mpi.allreduce` with `MPI_SUM` of f16 or bf16 buffers, for which MPI
      has no datatype (`MPIToLLVM` would reach an assert), becomes
      `ampMpiAllreduceSumF16` / `ampMpiAllreduceSumBF16` on the two buffers
      as unranked memrefs;
    - `mpi.comm_size` of `mpi.comm_world`, which `MPIToLLVM` in MLIR 22 does
      not lower, becomes `ampMpiWorldSize`.

    It checks what `MPIToLLVM` would get wrong silently: every buffer of an
    `mpi` op must be 1-D and contiguous (`MPIToLLVM` passes the size of
    dimension 0 as the count) and of a type with an MPI datatype (f32, f64,
    8- to 64-bit integers) or, summed by the runtime, f16 or bf16; the ops
    the runtime replaces must not return an `!mpi.retval` (its calls return
    none); and a module with MPI ops must name MPICH in its DLTI spec
    (`"MPI:Implementation"`), the ABI of both `MPIToLLVM`'s default and the
    runtime.
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect"];
}

def AmpMPIToGPU : Pass<"amp-mpi-to-gpu", "ModuleOp"> {
  let summary = "Turn the collectives of a data-parallel step into NCCL "
                "calls on device buffers";
  let description = [{
    The GPU lowering of what `amp-data-parallel` puts in a step (on
    tensors, before `amp-gpu-bufferize`):

    - each `mpi.allreduce` with `MPI_SUM` over `mpi.comm_world` of f32, f16
      or bf16 buffers becomes `amp_gpu.all_reduce_sum` (the runtime's
      `ampAllReduceSum`: `ncclAllReduce` with `ncclSum`, in the buffers'
      type, on the step's stream); its receive buffer, a `memref.alloc`,
      becomes a `gpu.alloc` (freed by `amp-gpu-bufferize` like any
      temporary), and its send buffer is a `bufferization.to_buffer` of a
      tensor, which bufferization places in device memory;
    - `mpi.comm_size` of `mpi.comm_world` becomes `amp_gpu.world_size`
      (`ampRuntimeWorldSize`: the size of the runtime's NCCL communicator,
      1 without one).

    Anything else of the `mpi` dialect is an error naming the op, as are a
    reduction other than `MPI_SUM`, another communicator, an
    `!mpi.retval` result (NCCL's status goes to the runtime's error state),
    buffers that are not 1-D and contiguous or of another element type, and
    buffers that do not come from a `memref.alloc` or a
    `bufferization.to_buffer` (they could be host memory).
  }];
  let dependentDialects = ["amp_gpu::AmpGPUDialect", "gpu::GPUDialect"];
}

def AmpLinalgToGPUMatmul : Pass<"amp-linalg-to-gpu-matmul", "ModuleOp"> {
  let summary = "Turn contractions on device buffers into runtime matmuls";
  let description = [{
    Rewrites `linalg.matmul` and `linalg.batch_matmul` on memrefs (with any
    transposed indexing maps) whose inputs are f16 or bf16 (and f32 with
    `matmul-f32`) into `amp_gpu.matmul`, which becomes a call of the
    runtime's cuBLASLt `ampMatmul` with f32 accumulation. Transposed
    operands become `memref.transpose` views: the runtime reads the layout
    from the strides, nothing is copied. The output type is the op's (f32 or
    the input type). A `linalg.fill` of zero into the output just before the
    contraction is folded into it (beta = 0). Each call gets its own
    `call_site` number for the runtime's plan cache.

    Other contractions (f32 without `matmul-f32`, mixed input types, outputs
    of another type) are left to the generic kernel path.
  }];
  let dependentDialects = ["amp_gpu::AmpGPUDialect", "memref::MemRefDialect"];
  let options = [
    Option<"matmulF32", "matmul-f32", "bool", /*default=*/"false",
           "Also run f32 contractions through the runtime">,
  ];
}

def AmpGPUParallelOuterLoops : Pass<"amp-gpu-parallel-outer-loops",
                                     "func::FuncOp"> {
  let summary = "Make the outermost loops of every linalg op parallel";
  let description = [{
    `convert-linalg-to-parallel-loops` makes one `scf.parallel` of the
    parallel loops *outside* the first reduction loop only, and only that
    loop becomes a kernel. So that each linalg op on memrefs becomes exactly
    one kernel, this pass
    - interchanges the loops of an op that starts with a reduction (a bias
      gradient summing over the batch, say) so that its parallel loops come
      first (named ops are generalized to do so); otherwise every reduction
      step would be a kernel launch from a host loop;
    - wraps an op without parallel loops (a 0-d update such as the loss
      scaler's, a full reduction such as the loss) in an `scf.parallel` of
      one iteration: a kernel of one thread, instead of host code reading
      device memory.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "scf::SCFDialect"];
}

def AmpGPUMapParallelLoops : Pass<"amp-gpu-map-parallel-loops",
                                   "func::FuncOp"> {
  let summary = "Tile each outermost scf.parallel into blocks of threads "
                "and map it to the GPU, the innermost dimension to x";
  let description = [{
    Each outermost `scf.parallel` (one kernel to be) becomes a loop over
    blocks around a loop over the threads of a block of up to 256 threads,
    with the `mapping` that `convert-parallel-loops-to-gpu` reads:

    - dimensions before the innermost are collapsed into one, so that every
      kernel has at most two, each with a hardware index;
    - the innermost dimension (contiguous in the step's row-major buffers)
      takes as many threads as it has iterations, rounded up to a power of
      two, up to 256, and maps to `x` threads: the 32 threads of a warp read
      neighbouring elements (coalesced). The outer dimension takes the rest
      of the block, as `y` threads;
    - blocks step over the outer dimension in `x` (up to 2^31 - 1 blocks)
      and over the inner one in `y` (up to 65535), or the other way round
      when the inner one needs (or, of unknown size, may need) more blocks
      than `y` holds and the outer one fits; a loop too large both ways is
      an error.

    A `[64, 10]` op gets blocks of 16 x 16 threads, a one-iteration loop
    (the scaler update) one thread. Unknown sizes get 64 (inner) and 4.
    Upstream's `scf-parallel-loop-tiling` gives every loop the same tile
    sizes, and `gpu-map-parallel-loops` maps the outermost dimension to `x`
    (`innermost-first` reverses only the first three). Like
    `scf-parallel-loop-tiling{no-min-max-bounds}`, the inner loop's bounds
    are the tile's and the body is guarded: with `affine.min` bounds,
    `convert-parallel-loops-to-gpu` keeps the loop on the host. A loop with
    reductions (`scf.reduce` operands) is an error.
  }];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "gpu::GPUDialect", "scf::SCFDialect"];
}

def AmpGPUEmulateOnHost : Pass<"amp-gpu-emulate-on-host", "func::FuncOp"> {
  let summary = "For testing: run the GPU lowering's buffers and kernels on "
                "the host";
  let description = [{
    Replaces, in a step lowered by `amp-lower-to-nvvm` up to its kernels
    (`gpu.launch`, before outlining: `amp-gpu-host-emulation`), what only a
    GPU can run by host equivalents:

    - `gpu.alloc` by `memref.alloc`, `gpu.memcpy` by `memref.copy`;
      `gpu.dealloc` is dropped (the CPU lowering frees host buffers);
    - each `amp_gpu.matmul` by a fill (beta = 0) and a `linalg.generic`
      accumulating the products in f32;
    - `amp_gpu.all_reduce_sum` and `amp_gpu.world_size` by `mpi.allreduce`
      (`MPI_SUM`) and `mpi.comm_size` over `mpi.comm_world`, which the CPU
      lowering runs through MPI: a world of one in a plain process, the
      job's ranks under `mpiexec`;
    - each `gpu.launch` by loops over its blocks and threads around its body
      (the lowering's kernels use no barriers or shared memory), after
      `cf.assert`s that its grid and block sizes are within CUDA's limits
      (grid x 2^31 - 1, y and z 65535; block x and y 1024, z 64, 1024 in
      all).

    `amp-run --before-lowering=amp-gpu-host-emulation` then trains the step
    with the GPU lowering's bufferization, matmul views and beta, split
    reductions, and kernels with their launch sizes, thread indexing and
    guards (`test/python/test_gpu_rewrites.py`). Not checked: the NVVM code,
    and how the runtime reads the matmul views' strides into cuBLASLt
    layouts.

    Only synchronous ops (before `gpu-async-region`), matmuls with alpha =
    1, beta = 0 or 1 and an f32 output (what the AMP pipeline produces),
    and launches without clusters, memory attributions or control flow are
    emulated; others are errors.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "linalg::LinalgDialect", "memref::MemRefDialect",
                           "mpi::MPIDialect", "scf::SCFDialect"];
}

def AmpCPUVectorize : Pass<"amp-cpu-vectorize", "func::FuncOp"> {
  let summary = "Tile and vectorize the cheap linalg ops on buffers for the "
                "CPU";
  let description = [{
    Part of `amp-lower-to-llvm` (`vectorize=true`), after bufferization. Ops
    with static shapes that the linalg vectorizer handles are tiled into
    `scf.for` loops over static tiles and each tile becomes vector code;
    every other op is left for `convert-linalg-to-loops`:

    - contractions (`linalg.matmul`, `linalg.batch_matmul`, transposed
      variants, contraction generics): tiles of at most 4 (last M dim) x 16
      (last N dim) x 8 (last K dim), other dims 1. The tile becomes a
      `vector.contract` of the operands after their `arith.extf` (a low
      precision matmul multiplies and accumulates in f32 as before), the
      accumulator tile is read once per (M, N) tile and held in registers
      across the K loop, and the contraction is unrolled into outer
      products;
    - ops whose innermost loop is parallel (elementwise ops, casts, fills,
      broadcasts, sums over outer dims such as a bias gradient), or reduces
      only integers (the overflow check's `or` of i1 flags, exact in any
      order): tiles of at most 16 along the innermost loop, other dims 1;
      when reduction loops come before a parallel innermost one, the tile
      also spans at most 16 of the innermost reduction loop, whose steps it
      adds one after the other;
    - generics whose innermost loop reduces floats and that have a parallel
      loop (row sums and maxima of a softmax, layer-norm statistics,
      BatchNorm's channel sums): the innermost parallel loop is moved inside
      the reduction loops first, then vectorized as above, so that a vector
      holds independent results, each summed in the loops' order. The tile
      (16 results by up to 16 elements of each) is read along the inputs'
      rows and transposed in registers (a 16x16 f32 tile by AVX-512's
      unpack and permute sequence), not gathered element by element;
    - elementwise generics that load a table's rows (`memref.load
      %table[%i, %j]`, `%j` the innermost loop and `%i` the same along it:
      the embedding lookups of `amp-one-hot-matmul-to-gather`), which the
      linalg vectorizer does not take: loops over the outer dims compute
      what is the same along a row once, around a 1-d generic on the rows
      of the table and of the operands (views), vectorized as above.

    The loops over the tiles run over the parallel dims first, then over
    the reduction dims, each group in the op's order: a reduction's
    accumulator tile stays in registers across its reduction loops.

    A tile size is the largest divisor of the dim not above the limit, so
    tiles need no masks; an op whose vectorized dim would be 1 (a prime
    above the limit) stays scalar. Float reductions to one value (the loss)
    and convolutions stay loops. A `memref.copy` between strided buffers
    with contiguous rows (a pad's interior), which the runtime would copy
    element by element, becomes a `linalg.copy` vectorized along its rows;
    contiguous copies stay `memref.copy` (memcpy), and so do copies of
    transposed views (vectorized, they computed wrong results on the
    ResNet block of the zoo; not understood yet).

    Rounding is that of the loops: the outer products' multiply-adds are
    split into a multiply and an add (never fused, whatever the target), and
    every sum keeps the loops' order (K ascending, reduced outer dims
    ascending), so `vectorize=true` and `vectorize=false` compute the same
    bits.

    With `parallel-loops` (`amp-lower-to-llvm` with `threads` above 1), the
    loops over the tiles of parallel dims are `scf.parallel` instead of
    `scf.for` (reduction dims stay `scf.for` inside them, in the same
    order), for `amp-cpu-parallel-loops` to split over threads. A reduction
    whose results would fill one vector of 16 (BatchNorm's sums over 16
    channels) then takes vectors of 8 and 8x8 tiles, so that two threads
    have a tile each; every result is still summed alone in the loops'
    order, so the bits do not change.
  }];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
  let options = [
    Option<"parallelLoops", "parallel-loops", "bool", /*default=*/"false",
           "Tile parallel dims into scf.parallel loops (else scf.for)">,
  ];
}

def AmpCPUApproximateMath : Pass<"amp-cpu-approximate-math", "func::FuncOp"> {
  let summary = "Replace f32 exp, expm1, log, log1p, tanh and erf by MLIR's "
                "polynomial approximations";
  let description = [{
    Part of `amp-lower-to-llvm` (`approximate-math=true`), after
    `amp-cpu-vectorize`. LLVM has no vector libm for the JIT: a vector
    `math.exp` or `math.erf` would become one libm call per element (a GELU
    and a softmax spent 28% of the benchmark's GPT step in scalar `erff` and
    `expf`). The functions of activations, softmax and losses (`exp`,
    `expm1`, `log`, `log1p`, `tanh`, `erf`) on f32 scalars and vectors
    become MLIR's polynomial approximations instead
    (`populateMathPolynomialApproximationPatterns`): arithmetic on the
    vectors as they are. Other math functions, and other element types, are
    left to `convert-math-to-llvm` and `convert-math-to-libm`.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def AmpCPURoundToBF16 : Pass<"amp-cpu-round-to-bf16", "func::FuncOp"> {
  let summary = "Round f32 to bf16 with integer operations";
  let description = [{
    Part of `amp-lower-to-llvm` with `native-bf16=false`, for CPUs without
    an instruction that rounds f32 to bf16 (no AVX512-BF16 or AVX-NE-CONVERT:
    AVX2 hosts such as AMD Zen 3). There LLVM lowers a vector `fptrunc` to
    bf16 into one `__truncsfbf2` call per element, which made the bf16 steps
    slower than the fp32 ones. After `math-extend-to-supported-types` and
    `arith-emulate-unsupported-floats` have moved bf16 arithmetic to f32,
    every `arith.truncf` from f32 to bf16 (scalar or vector, rounding to
    nearest even) becomes integer code on the f32 bits: add `0x7fff` plus
    the lowest kept bit, keep the upper 16 bits; a NaN keeps its sign and
    upper payload with the quiet bit set, as `__truncsfbf2` does. The same
    bits as LLVM's lowering, in vector registers.

    Unlike upstream's `arith-expand{include-bf16}`, no `select` chooses
    between bf16 values: LLVM would move the final bitcast above it and
    then split a `select` on a `<16 x bfloat>` into scalars (and take
    seconds to schedule the result).
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def AmpCPUParallelLoops : Pass<"amp-cpu-parallel-loops", "ModuleOp"> {
  let summary = "Run the outermost parallel loops with enough work on "
                "several threads of the CPU runtime's OpenMP team";
  let description = [{
    Part of `amp-lower-to-llvm` with `threads` above 1, after the linalg ops
    have become `scf.parallel` loops over their parallel dims (tiles of
    `amp-cpu-vectorize{parallel-loops}`, `convert-linalg-to-parallel-loops`)
    and `scf.for` loops over their reduction dims. Only the parallel dims are
    split, and every iteration runs whole on one thread, so every sum keeps
    its order and the results are the same bits for any `threads`.

    - An `scf.parallel` nested in another one becomes `scf.for` loops: its
      outermost enclosing one is split.
    - An outermost `scf.parallel` with less than 2 x `grain` work (its
      iterations times the operations of one iteration, vector operations
      counted per element, loops inside counted by their static trip counts,
      a dynamic one as 64) becomes `scf.for` loops: it would not pay for a
      thread's wake-up.
    - Of each other one, the iterations of its first dim with more than one
      (the rows, the batch) are split into at most `threads` blocks of
      consecutive iterations, each at least `grain` work. The loop becomes a
      private function `<function>_parallel(context: !llvm.ptr, block: i64)`
      that runs the rows of block `block` and all of the other dims, as
      `scf.for` loops in order. The step stores the span of a block and the
      values the loop captures (memrefs as their LLVM descriptors, through
      `builtin.unrealized_conversion_cast`s that the LLVM conversion
      resolves) in a context on its stack, allocated at its entry, and calls
      the CPU runtime's `ampCpuParallelFor(body, context, blocks)`, which
      runs the blocks on the threads of oneDNN's OpenMP team (the calling
      thread among them) and returns when all are done. A dynamic trip count
      (a dynamic batch) is split the same way at run time; fewer rows than
      two blocks' worth make one block, run in the calling thread. A loop
      that captures a value without an LLVM type runs in order.

    `scf.parallel` loops with reductions are left as they are (sequential
    after `convert-scf-to-cf`). `threads=1` makes every `scf.parallel`
    sequential loops.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect", "scf::SCFDialect"];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads to split the loops over (the calling one included)">,
    Option<"grain", "grain", "int64_t", /*default=*/"65536",
           "The least work (operations, vector ones per element) of one "
           "thread's block">,
  ];
}

#endif // AMP_CONVERSION_PASSES_TD
