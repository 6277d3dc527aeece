//===- Presets.cpp - The op lists of the built-in precision presets -------===//
//
// Data only: each preset mirrors one framework's mixed-precision lists,
// mapped onto MLIR op names, one line per op. `source` names the entries of
// the framework's list that the MLIR op stands for; an entry with no MLIR
// counterpart is listed as unmapped with the reason, never mapped onto an
// invented op. docs/Presets.md is generated from these tables.
//
// Sources:
// - torch: PyTorch's CUDA autocast lists (aten/src/ATen/autocast_mode.h:
//   AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE,
//   AT_FORALL_PROMOTE). Ops in no list run in their inputs' type, and mixed
//   inputs promote to f32: that is `infer`; data movement is `clear`.
// - tf: grappler's AutoMixedPrecisionListsCuda
//   (tensorflow/core/grappler/optimizers/auto_mixed_precision_lists.h).
// - mindspore: the auto_whitelist, auto_blacklist and promote_list of
//   `amp_level="auto"` (mindspore.amp.auto_mixed_precision). Ops in no list
//   run in their inputs' type, as in PyTorch.
// - tensor-cores-only: tf's allow list alone, like grappler's
//   TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=TENSOR_CORES_ONLY.
// - mindspore-o1, mindspore-o2, mindspore-o3: MindSpore's amp levels
//   (mindspore/python/mindspore/train/amp.py): O1 converts AMP_WHITE_LIST
//   and keeps every other op in f32 (ops in no list are deny); O2 converts
//   every op but AMP_BLACK_LIST and O3 every op (ops in no list are allow).
//   The `level` option of amp-pipeline selects them.
//
// Reductions (sum, mean, prod) are absent on purpose: the analysis
// accumulates every reduction in f32 itself, and classifies linalg.generic
// by its body.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "llvm/ADT/STLExtras.h"
#include <vector>

using namespace mlir;
using namespace mlir::amp;

namespace {
constexpr OpCategory Allow = OpCategory::Allow;
constexpr OpCategory Deny = OpCategory::Deny;
constexpr OpCategory Infer = OpCategory::Infer;
constexpr OpCategory Clear = OpCategory::Clear;

// Why a list entry has no MLIR counterpart; shared by the presets.
constexpr llvm::StringLiteral kChain =
    "no single MLIR op: linalg-on-tensors spells it as a chain of "
    "elementwise ops and reductions, whose own categories apply";
constexpr llvm::StringLiteral kNorm =
    "no single MLIR op: a chain whose rsqrt/division by a reduction is in "
    "the lists, and whose reductions accumulate in f32";
constexpr llvm::StringLiteral kLoss =
    "no single MLIR op: a loss is a chain of log/exp ops (deny) and "
    "reductions (accumulated in f32)";
constexpr llvm::StringLiteral kReduction =
    "a reduction: the analysis accumulates every reduction in f32 itself "
    "instead of denying it";
constexpr llvm::StringLiteral kScan =
    "no MLIR op on tensors: a scan is an scf loop or a linalg.generic";
constexpr llvm::StringLiteral kRnn =
    "no MLIR op: an RNN cell is a chain of matmuls (allow) and elementwise "
    "ops";
constexpr llvm::StringLiteral kTransposedConv =
    "no named linalg op: a transposed convolution is a convolution over a "
    "dilated, padded input, which is allow";
constexpr llvm::StringLiteral kAttention =
    "no single MLIR op: attention is matmul (allow), softmax (deny), matmul";
constexpr llvm::StringLiteral kGather =
    "no named op: interpolation and sampling gather with tensor.extract "
    "inside a linalg.generic";
constexpr llvm::StringLiteral kNoMathOp = "no math dialect op computes it";
constexpr llvm::StringLiteral kGraphOnly =
    "a TensorFlow graph construct (control flow, TensorList, identity-like "
    "markers) with no counterpart in a step function";

// clang-format off

//===----------------------------------------------------------------------===//
// torch
//===----------------------------------------------------------------------===//

constexpr PresetEntry kTorch[] = {
    {"linalg.matmul",                    Allow, "mm, matmul, addmm, linear, chain_matmul, linalg_multi_dot (autocast lower_precision_fp list)"},
    {"linalg.batch_matmul",              Allow, "bmm, baddbmm, matmul of batches (autocast lower_precision_fp list)"},
    {"linalg.batch_reduce_matmul",       Allow, "addbmm (autocast lower_precision_fp list)"},
    {"linalg.matvec",                    Allow, "mv, addmv (autocast lower_precision_fp list)"},
    {"linalg.vecmat",                    Allow, "matmul of a vector by a matrix (autocast lower_precision_fp list)"},
    {"linalg.batch_matvec",              Allow, "matmul of batched matrices by vectors (autocast lower_precision_fp list)"},
    {"linalg.batch_vecmat",              Allow, "matmul of batched vectors by matrices (autocast lower_precision_fp list)"},
    {"linalg.dot",                       Allow, "linalg_vecdot (autocast lower_precision_fp list)"},
    {"linalg.contract",                  Allow, "einsum (autocast lower_precision_fp list)"},
    {"linalg.mmt4d",                     Allow, "mm in a tiled layout (autocast lower_precision_fp list)"},
    {"linalg.batch_mmt4d",               Allow, "bmm in a tiled layout (autocast lower_precision_fp list)"},
    {"linalg.conv_1d",                   Allow, "conv1d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_1d_nwc_wcf",           Allow, "conv1d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_1d_ncw_fcw",           Allow, "conv1d, convolution (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_1d_nwc_wc",  Allow, "conv1d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_1d_ncw_cw",  Allow, "conv1d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_1d_nwc_wcm", Allow, "conv1d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.conv_2d",                   Allow, "conv2d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_nhwc_hwcf",         Allow, "conv2d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_nhwc_fhwc",         Allow, "conv2d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_nchw_fchw",         Allow, "conv2d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_ngchw_fgchw",       Allow, "conv2d with groups (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_ngchw_gfchw",       Allow, "conv2d with groups (autocast lower_precision_fp list)"},
    {"linalg.conv_2d_nhwgc_gfhwc",       Allow, "conv2d with groups (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_2d_nhwc_hwc", Allow, "conv2d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_2d_nchw_chw", Allow, "conv2d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_2d_nhwc_hwcm", Allow, "conv2d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.conv_3d",                   Allow, "conv3d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_3d_ndhwc_dhwcf",       Allow, "conv3d, convolution (autocast lower_precision_fp list)"},
    {"linalg.conv_3d_ncdhw_fcdhw",       Allow, "conv3d, convolution (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwc", Allow, "conv3d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_3d_ncdhw_cdhw", Allow, "conv3d with groups = channels (autocast lower_precision_fp list)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwcm", Allow, "conv3d with groups = channels (autocast lower_precision_fp list)"},

    {"math.acos",                        Deny,  "acos (autocast fp32 list)"},
    {"math.asin",                        Deny,  "asin (autocast fp32 list)"},
    {"math.cosh",                        Deny,  "cosh (autocast fp32 list)"},
    {"math.sinh",                        Deny,  "sinh (autocast fp32 list)"},
    {"math.tan",                         Deny,  "tan (autocast fp32 list)"},
    {"math.exp",                         Deny,  "exp (autocast fp32 list)"},
    {"linalg.exp",                       Deny,  "exp (autocast fp32 list)"},
    {"math.expm1",                       Deny,  "expm1 (autocast fp32 list)"},
    {"math.log",                         Deny,  "log (autocast fp32 list)"},
    {"linalg.log",                       Deny,  "log (autocast fp32 list)"},
    {"math.log10",                       Deny,  "log10 (autocast fp32 list)"},
    {"math.log2",                        Deny,  "log2 (autocast fp32 list)"},
    {"math.log1p",                       Deny,  "log1p (autocast fp32 list)"},
    {"linalg.reciprocal",                Deny,  "reciprocal (autocast fp32 list)"},
    {"math.rsqrt",                       Deny,  "rsqrt (autocast fp32 list)"},
    {"linalg.rsqrt",                     Deny,  "rsqrt (autocast fp32 list)"},
    {"math.powf",                        Deny,  "pow.Tensor_Tensor, pow.Tensor_Scalar, pow.Scalar (autocast fp32 list)"},
    {"math.fpowi",                       Deny,  "pow.Tensor_Scalar with an integer exponent (autocast fp32 list)"},
    {"linalg.powf",                      Deny,  "pow.Tensor_Tensor (autocast fp32 list)"},
    {"linalg.softmax",                   Deny,  "softmax (autocast fp32_set_opt_dtype list)"},

    {"math.atan2",                       Infer, "atan2 (autocast promote list)"},
    {"tensor.scatter",                   Infer, "index_put (autocast promote list)"},
    {"arith.addf",                       Infer, "add (in no autocast list: runs in its inputs' type)"},
    {"linalg.add",                       Infer, "add (in no autocast list: runs in its inputs' type)"},
    {"arith.subf",                       Infer, "sub (in no autocast list: runs in its inputs' type)"},
    {"linalg.sub",                       Infer, "sub (in no autocast list: runs in its inputs' type)"},
    {"arith.mulf",                       Infer, "mul (in no autocast list: runs in its inputs' type)"},
    {"linalg.mul",                       Infer, "mul (in no autocast list: runs in its inputs' type)"},
    {"arith.divf",                       Infer, "div (in no autocast list: runs in its inputs' type)"},
    {"linalg.div",                       Infer, "div (in no autocast list: runs in its inputs' type)"},
    {"arith.remf",                       Infer, "fmod (in no autocast list: runs in its inputs' type)"},
    {"arith.negf",                       Infer, "neg (in no autocast list: runs in its inputs' type)"},
    {"linalg.negf",                      Infer, "neg (in no autocast list: runs in its inputs' type)"},
    {"arith.maximumf",                   Infer, "maximum, relu (in no autocast list: runs in its inputs' type)"},
    {"linalg.max",                       Infer, "maximum (in no autocast list: runs in its inputs' type)"},
    {"arith.minimumf",                   Infer, "minimum (in no autocast list: runs in its inputs' type)"},
    {"linalg.min",                       Infer, "minimum (in no autocast list: runs in its inputs' type)"},
    {"arith.maxnumf",                    Infer, "fmax (in no autocast list: runs in its inputs' type)"},
    {"arith.minnumf",                    Infer, "fmin (in no autocast list: runs in its inputs' type)"},
    {"arith.select",                     Infer, "where (in no autocast list: runs in its inputs' type)"},
    {"linalg.select",                    Infer, "where (in no autocast list: runs in its inputs' type)"},
    {"arith.cmpf",                       Infer, "eq, ne, lt, le, gt, ge (in no autocast list: runs in its inputs' type)"},
    {"math.tanh",                        Infer, "tanh (in no autocast list: runs in its inputs' type)"},
    {"linalg.tanh",                      Infer, "tanh (in no autocast list: runs in its inputs' type)"},
    {"math.erf",                         Infer, "erf (in no autocast list: runs in its inputs' type)"},
    {"linalg.erf",                       Infer, "erf (in no autocast list: runs in its inputs' type)"},
    {"math.erfc",                        Infer, "erfc (in no autocast list: runs in its inputs' type)"},
    {"math.sqrt",                        Infer, "sqrt (in no autocast list: runs in its inputs' type)"},
    {"linalg.sqrt",                      Infer, "sqrt (in no autocast list: runs in its inputs' type)"},
    {"linalg.square",                    Infer, "square (in no autocast list: runs in its inputs' type)"},
    {"math.absf",                        Infer, "abs (in no autocast list: runs in its inputs' type)"},
    {"linalg.abs",                       Infer, "abs (in no autocast list: runs in its inputs' type)"},
    {"math.exp2",                        Infer, "exp2 (in no autocast list: runs in its inputs' type)"},
    {"math.sin",                         Infer, "sin (in no autocast list: runs in its inputs' type)"},
    {"math.cos",                         Infer, "cos (in no autocast list: runs in its inputs' type)"},
    {"math.atan",                        Infer, "atan (in no autocast list: runs in its inputs' type)"},
    {"math.asinh",                       Infer, "asinh (in no autocast list: runs in its inputs' type)"},
    {"math.acosh",                       Infer, "acosh (in no autocast list: runs in its inputs' type)"},
    {"math.atanh",                       Infer, "atanh (in no autocast list: runs in its inputs' type)"},
    {"math.ceil",                        Infer, "ceil (in no autocast list: runs in its inputs' type)"},
    {"linalg.ceil",                      Infer, "ceil (in no autocast list: runs in its inputs' type)"},
    {"math.floor",                       Infer, "floor (in no autocast list: runs in its inputs' type)"},
    {"linalg.floor",                     Infer, "floor (in no autocast list: runs in its inputs' type)"},
    {"math.roundeven",                   Infer, "round (in no autocast list: runs in its inputs' type)"},
    {"math.trunc",                       Infer, "trunc (in no autocast list: runs in its inputs' type)"},
    {"math.copysign",                    Infer, "copysign (in no autocast list: runs in its inputs' type)"},
    {"math.clampf",                      Infer, "clamp (in no autocast list: runs in its inputs' type)"},
    {"math.isnan",                       Infer, "isnan (in no autocast list: runs in its inputs' type)"},
    {"math.isinf",                       Infer, "isinf (in no autocast list: runs in its inputs' type)"},
    {"math.isfinite",                    Infer, "isfinite (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nhwc_max",          Infer, "max_pool2d (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nchw_max",          Infer, "max_pool2d (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nwc_max",           Infer, "max_pool1d (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_ncw_max",           Infer, "max_pool1d (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_ndhwc_max",         Infer, "max_pool3d (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nhwc_sum",          Infer, "avg_pool2d, a sum pool then a division (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nchw_sum",          Infer, "avg_pool2d, a sum pool then a division (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_nwc_sum",           Infer, "avg_pool1d, a sum pool then a division (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_ncw_sum",           Infer, "avg_pool1d, a sum pool then a division (in no autocast list: runs in its inputs' type)"},
    {"linalg.pooling_ndhwc_sum",         Infer, "avg_pool3d, a sum pool then a division (in no autocast list: runs in its inputs' type)"},

    {"tensor.reshape",                   Clear, "reshape, view (in no autocast list: moves data in its input's type)"},
    {"tensor.expand_shape",              Clear, "unsqueeze, view (in no autocast list: moves data in its input's type)"},
    {"tensor.collapse_shape",            Clear, "squeeze, flatten (in no autocast list: moves data in its input's type)"},
    {"tensor.cast",                      Clear, "view with a static shape (in no autocast list: moves data in its input's type)"},
    {"tensor.extract_slice",             Clear, "slice, narrow, select, split, chunk (in no autocast list: moves data in its input's type)"},
    {"tensor.insert_slice",              Clear, "slice_scatter (in no autocast list: moves data in its input's type)"},
    {"tensor.extract",                   Clear, "indexing one element (in no autocast list: moves data in its input's type)"},
    {"tensor.insert",                    Clear, "setting one element (in no autocast list: moves data in its input's type)"},
    {"tensor.concat",                    Clear, "cat, stack (in no autocast list: moves data in its inputs' type)"},
    {"tensor.pad",                       Clear, "constant_pad_nd (in no autocast list: moves data in its input's type)"},
    {"tensor.gather",                    Clear, "gather, index_select (in no autocast list: moves data in its input's type)"},
    {"tensor.splat",                     Clear, "full (in no autocast list: moves data in its input's type)"},
    {"tensor.empty",                     Clear, "empty (in no autocast list: holds no data)"},
    {"linalg.fill",                      Clear, "fill_, full, zeros, ones (in no autocast list: moves data in its input's type)"},
    {"linalg.transpose",                 Clear, "permute, transpose, t (in no autocast list: moves data in its input's type)"},
    {"linalg.broadcast",                 Clear, "expand, broadcast_to (in no autocast list: moves data in its input's type)"},
    {"linalg.copy",                      Clear, "clone, copy_ (in no autocast list: moves data in its input's type)"},
};

constexpr UnmappedEntry kTorchUnmapped[] = {
    {"conv_transpose1d, conv_transpose2d, conv_transpose3d (autocast lower_precision_fp list)", Allow, kTransposedConv},
    {"conv_tbc (autocast lower_precision_fp list)", Allow, "no named linalg op for the time-batch-channel layout; a transpose then a conv_1d is allow"},
    {"addr (autocast lower_precision_fp list)", Allow, "no named op: an outer product is an elementwise linalg.generic with no reduction"},
    {"prelu (autocast lower_precision_fp list)", Allow, kChain},
    {"_thnn_fused_lstm_cell, _thnn_fused_gru_cell, lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell (autocast lower_precision_fp list)", Allow, kRnn},
    {"scaled_dot_product_attention, _scaled_dot_product_flash_attention (autocast lower_precision_fp list)", Allow, kAttention},
    {"erfinv (autocast fp32 list)", Deny, kNoMathOp},
    {"softplus (autocast fp32 list)", Deny, kChain},
    {"layer_norm, native_layer_norm, group_norm (autocast fp32 list)", Deny, kNorm},
    {"frobenius_norm, nuclear_norm, renorm (autocast fp32 list)", Deny, kNorm},
    {"cosine_similarity, dist, pdist, cdist (autocast fp32 list)", Deny, kNorm},
    {"logsumexp (autocast fp32 list)", Deny, kChain},
    {"nll_loss, nll_loss2d, poisson_nll_loss, kl_div, l1_loss, smooth_l1_loss, huber_loss, mse_loss (autocast fp32 list)", Deny, kLoss},
    {"cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multilabel_margin_loss, soft_margin_loss, triplet_margin_loss, multi_margin_loss (autocast fp32 list)", Deny, kLoss},
    {"binary_cross_entropy_with_logits (autocast fp32 list)", Deny, kLoss},
    {"upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d, upsample_linear1d, upsample_bilinear2d, _upsample_bilinear2d_aa, upsample_trilinear3d, upsample_bicubic2d, _upsample_bicubic2d_aa (autocast fp32 list)", Deny, kGather},
    {"sum, prod (autocast fp32_set_opt_dtype list)", Deny, kReduction},
    {"cumsum, cumprod (autocast fp32_set_opt_dtype list)", Deny, kScan},
    {"log_softmax (autocast fp32_set_opt_dtype list)", Deny, kChain},
    {"linalg_vector_norm, linalg_matrix_norm, norm (autocast fp32_set_opt_dtype and fp32_append_dtype lists)", Deny, kNorm},
    {"dot, vdot (autocast promote list)", Infer, "linalg.dot stands for linalg_vecdot (lower_precision_fp list), a distinction linalg does not make"},
    {"tensordot (autocast promote list)", Infer, "it lowers to linalg.contract, which stands for einsum (lower_precision_fp list)"},
    {"addcdiv, addcmul, cross, bilinear (autocast promote list)", Infer, kChain},
    {"grid_sampler (autocast promote list)", Infer, kGather},
    {"scatter_add (autocast promote list)", Infer, "no MLIR op on tensors: tensor.scatter overwrites, it does not add"},
};

//===----------------------------------------------------------------------===//
// tf
//===----------------------------------------------------------------------===//

constexpr PresetEntry kTf[] = {
    {"linalg.matmul",                    Allow, "MatMul (grappler allow list)"},
    {"linalg.matvec",                    Allow, "MatMul of a matrix by a vector (grappler allow list)"},
    {"linalg.vecmat",                    Allow, "MatMul of a vector by a matrix (grappler allow list)"},
    {"linalg.dot",                       Allow, "MatMul of a row by a column (grappler allow list)"},
    {"linalg.mmt4d",                     Allow, "MatMul in a tiled layout (grappler allow list)"},
    {"linalg.batch_matmul",              Allow, "BatchMatMul, BatchMatMulV2 (grappler allow list)"},
    {"linalg.batch_matvec",              Allow, "BatchMatMulV2 of matrices by vectors (grappler allow list)"},
    {"linalg.batch_vecmat",              Allow, "BatchMatMulV2 of vectors by matrices (grappler allow list)"},
    {"linalg.batch_mmt4d",               Allow, "BatchMatMulV2 in a tiled layout (grappler allow list)"},
    {"linalg.contract",                  Allow, "Einsum (grappler allow list)"},
    {"linalg.conv_1d",                   Allow, "Conv2D, which tf.nn.conv1d runs as (grappler allow list)"},
    {"linalg.conv_1d_nwc_wcf",           Allow, "Conv2D, which tf.nn.conv1d runs as (grappler allow list)"},
    {"linalg.conv_1d_ncw_fcw",           Allow, "Conv2D, which tf.nn.conv1d runs as (grappler allow list)"},
    {"linalg.depthwise_conv_1d_nwc_wc",  Allow, "DepthwiseConv2dNative on a 1-D input (grappler allow list)"},
    {"linalg.depthwise_conv_1d_ncw_cw",  Allow, "DepthwiseConv2dNative on a 1-D input (grappler allow list)"},
    {"linalg.depthwise_conv_1d_nwc_wcm", Allow, "DepthwiseConv2dNative on a 1-D input (grappler allow list)"},
    {"linalg.conv_2d",                   Allow, "Conv2D (grappler allow list)"},
    {"linalg.conv_2d_nhwc_hwcf",         Allow, "Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (grappler allow list)"},
    {"linalg.conv_2d_nhwc_fhwc",         Allow, "Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (grappler allow list)"},
    {"linalg.conv_2d_nchw_fchw",         Allow, "Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter (grappler allow list)"},
    {"linalg.conv_2d_ngchw_fgchw",       Allow, "Conv2D with groups (grappler allow list)"},
    {"linalg.conv_2d_ngchw_gfchw",       Allow, "Conv2D with groups (grappler allow list)"},
    {"linalg.conv_2d_nhwgc_gfhwc",       Allow, "Conv2D with groups (grappler allow list)"},
    {"linalg.depthwise_conv_2d_nhwc_hwc", Allow, "DepthwiseConv2dNative and its backprops (grappler allow list)"},
    {"linalg.depthwise_conv_2d_nchw_chw", Allow, "DepthwiseConv2dNative and its backprops (grappler allow list)"},
    {"linalg.depthwise_conv_2d_nhwc_hwcm", Allow, "DepthwiseConv2dNative and its backprops (grappler allow list)"},
    {"linalg.conv_3d",                   Allow, "Conv3D (grappler allow list)"},
    {"linalg.conv_3d_ndhwc_dhwcf",       Allow, "Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 (grappler allow list)"},
    {"linalg.conv_3d_ncdhw_fcdhw",       Allow, "Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 (grappler allow list)"},

    {"math.exp",                         Deny,  "Exp (grappler deny list)"},
    {"linalg.exp",                       Deny,  "Exp (grappler deny list)"},
    {"math.expm1",                       Deny,  "Expm1 (grappler deny list)"},
    {"math.powf",                        Deny,  "Pow (grappler deny list)"},
    {"math.fpowi",                       Deny,  "Pow with an integer exponent (grappler deny list)"},
    {"linalg.powf",                      Deny,  "Pow (grappler deny list)"},

    {"arith.addf",                       Infer, "Add, AddV2 (grappler infer list)"},
    {"linalg.add",                       Infer, "Add, AddV2 (grappler infer list)"},
    {"arith.subf",                       Infer, "Sub (grappler infer list)"},
    {"linalg.sub",                       Infer, "Sub (grappler infer list)"},
    {"arith.mulf",                       Infer, "Mul (grappler infer list)"},
    {"linalg.mul",                       Infer, "Mul (grappler infer list)"},
    {"arith.divf",                       Infer, "RealDiv (grappler infer list)"},
    {"linalg.div",                       Infer, "RealDiv (grappler infer list)"},
    {"linalg.reciprocal",                Infer, "Reciprocal, Inv (grappler infer list)"},
    {"math.erf",                         Infer, "Erf (grappler infer list)"},
    {"linalg.erf",                       Infer, "Erf (grappler infer list)"},
    {"math.erfc",                        Infer, "Erfc (grappler infer list)"},
    {"math.log",                         Infer, "Log (grappler infer list)"},
    {"linalg.log",                       Infer, "Log (grappler infer list)"},
    {"math.log1p",                       Infer, "Log1p (grappler infer list)"},
    {"math.sqrt",                        Infer, "Sqrt (grappler infer list)"},
    {"linalg.sqrt",                      Infer, "Sqrt (grappler infer list)"},
    {"math.tanh",                        Infer, "Tanh (grappler infer list)"},
    {"linalg.tanh",                      Infer, "Tanh (grappler infer list)"},
    {"linalg.softmax",                   Infer, "Softmax (grappler infer list)"},
    {"linalg.pooling_nhwc_sum",          Infer, "AvgPool, a sum pool then a division (grappler infer list)"},
    {"linalg.pooling_nchw_sum",          Infer, "AvgPool, a sum pool then a division (grappler infer list)"},
    {"linalg.pooling_nwc_sum",           Infer, "AvgPool on a 1-D input (grappler infer list)"},
    {"linalg.pooling_ncw_sum",           Infer, "AvgPool on a 1-D input (grappler infer list)"},
    {"linalg.pooling_ndhwc_sum",         Infer, "AvgPool3D (grappler infer list)"},

    {"math.absf",                        Clear, "Abs (grappler clear list)"},
    {"linalg.abs",                       Clear, "Abs (grappler clear list)"},
    {"math.ceil",                        Clear, "Ceil (grappler clear list)"},
    {"linalg.ceil",                      Clear, "Ceil (grappler clear list)"},
    {"math.floor",                       Clear, "Floor (grappler clear list)"},
    {"linalg.floor",                     Clear, "Floor (grappler clear list)"},
    {"math.roundeven",                   Clear, "Round (grappler clear list)"},
    {"math.clampf",                      Clear, "ClipByValue (grappler clear list)"},
    {"math.isfinite",                    Clear, "IsFinite (grappler clear list)"},
    {"math.isinf",                       Clear, "IsInf (grappler clear list)"},
    {"math.isnan",                       Clear, "IsNan (grappler clear list)"},
    {"arith.cmpf",                       Clear, "Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual (grappler clear list)"},
    {"arith.maximumf",                   Clear, "Maximum, Relu (grappler clear list)"},
    {"arith.maxnumf",                    Clear, "Maximum (grappler clear list)"},
    {"linalg.max",                       Clear, "Maximum (grappler clear list)"},
    {"arith.minimumf",                   Clear, "Minimum (grappler clear list)"},
    {"arith.minnumf",                    Clear, "Minimum (grappler clear list)"},
    {"linalg.min",                       Clear, "Minimum (grappler clear list)"},
    {"arith.negf",                       Clear, "Neg (grappler clear list)"},
    {"linalg.negf",                      Clear, "Neg (grappler clear list)"},
    {"arith.select",                     Clear, "Select, SelectV2 (grappler clear list)"},
    {"linalg.select",                    Clear, "Select, SelectV2 (grappler clear list)"},
    {"linalg.pooling_nhwc_max",          Clear, "MaxPool, MaxPoolV2 (grappler clear list)"},
    {"linalg.pooling_nchw_max",          Clear, "MaxPool, MaxPoolV2 (grappler clear list)"},
    {"linalg.pooling_nwc_max",           Clear, "MaxPool on a 1-D input (grappler clear list)"},
    {"linalg.pooling_ncw_max",           Clear, "MaxPool on a 1-D input (grappler clear list)"},
    {"linalg.pooling_ndhwc_max",         Clear, "MaxPool3D (grappler clear list)"},
    {"tensor.reshape",                   Clear, "Reshape (grappler clear list)"},
    {"tensor.expand_shape",              Clear, "ExpandDims (grappler clear list)"},
    {"tensor.collapse_shape",            Clear, "Squeeze (grappler clear list)"},
    {"tensor.cast",                      Clear, "EnsureShape (grappler clear list)"},
    {"tensor.extract_slice",             Clear, "Slice, StridedSlice, Split, SplitV, Unpack (grappler clear list)"},
    {"tensor.extract",                   Clear, "Slice of one element (grappler clear list)"},
    {"tensor.insert_slice",              Clear, "StridedSliceGrad (grappler clear list)"},
    {"tensor.concat",                    Clear, "Concat, ConcatV2, Pack (grappler clear list)"},
    {"tensor.pad",                       Clear, "Pad, PadV2 (grappler clear list)"},
    {"tensor.gather",                    Clear, "Gather, GatherV2, GatherNd (grappler clear list)"},
    {"tensor.splat",                     Clear, "Fill (grappler clear list)"},
    {"tensor.empty",                     Clear, "Fill without a value (grappler clear list)"},
    {"linalg.fill",                      Clear, "Fill, OnesLike, ZerosLike (grappler clear list)"},
    {"linalg.transpose",                 Clear, "Transpose (grappler clear list)"},
    {"linalg.broadcast",                 Clear, "BroadcastTo (grappler clear list)"},
    {"linalg.copy",                      Clear, "Identity, Snapshot (grappler clear list)"},
};

constexpr UnmappedEntry kTfUnmapped[] = {
    {"BlockLSTM, BlockLSTMV2, BlockLSTMGrad, BlockLSTMGradV2, LSTMBlockCell, LSTMBlockCellGrad, GRUBlockCell, GRUBlockCellGrad (grappler allow list)", Allow, kRnn},
    {"CudnnRNN, CudnnRNNV2, CudnnRNNV3, CudnnRNNBackprop, CudnnRNNBackpropV2, CudnnRNNBackpropV3 (grappler allow list)", Allow, kRnn},
    {"FusedConv2DBiasActivation (grappler allow list)", Allow, "a fused conv, bias add and activation: conv_2d_* (allow) then elementwise ops"},
    {"FusedSparseConvGpuV2 (grappler allow list)", Allow, "no MLIR op: sparse convolution"},
    {"Mha, Tmlp (grappler allow list)", Allow, "fused attention and MLP blocks: chains of matmuls (allow) and elementwise ops"},
    {"Conv3DBackpropFilter, Conv3DBackpropInput (grappler allow list)", Allow, "the deprecated V1 ops; their V2 forms map to conv_3d_*"},
    {"L2Loss, SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits (grappler deny list)", Deny, kLoss},
    {"Mean, Sum (grappler deny list)", Deny, kReduction},
    {"SaveV2 (grappler deny list)", Deny, "checkpoint I/O, not part of a step function"},
    {"AddN (grappler infer list)", Infer, "no single MLIR op: a chain of arith.addf (infer)"},
    {"BiasAdd, BiasAddV1, BiasAddGrad (grappler infer list)", Infer, "a broadcast add (linalg.broadcast, then linalg.add or arith.addf) and, for the gradient, a reduction"},
    {"FloorDiv (grappler infer list)", Infer, "no single MLIR op: arith.divf then math.floor"},
    {"AvgPoolGrad, AvgPool3DGrad (grappler infer list)", Infer, kChain},
    {"Elu, EluGrad, Selu, SeluGrad, LeakyRelu, LeakyReluGrad, Sigmoid, SigmoidGrad, TanhGrad, Softplus, SoftplusGrad, Softsign, SoftsignGrad (grappler infer list)", Infer, kChain},
    {"FusedBatchNormV2, FusedBatchNormV3, FusedBatchNormGradV2, FusedBatchNormGradV3, _FusedBatchNormEx (grappler infer list)", Infer, kNorm},
    {"LogSoftmax (grappler infer list)", Infer, kChain},
    {"Prod (grappler infer list)", Infer, kReduction},
    {"ArgMax, ArgMin, Max, Min (grappler clear list)", Clear, kReduction},
    {"Relu6, Relu6Grad, ReluGrad, Sign (grappler clear list)", Clear, kChain},
    {"MaxPoolGrad, MaxPoolGradV2, MaxPoolGradGrad, MaxPoolGradGradV2, MaxPool3DGrad, MaxPool3DGradGrad (grappler clear list)", Clear, kChain},
    {"MirrorPad, MirrorPadGrad, ReverseV2, Reverse, ReverseSequence, Tile (grappler clear list)", Clear, "no named op: index-remapping linalg.generic or tensor.generate"},
    {"BatchToSpace, BatchToSpaceND, SpaceToBatch, SpaceToBatchND, DepthToSpace, SpaceToDepth (grappler clear list)", Clear, "no single MLIR op: reshapes around a linalg.transpose, both clear"},
    {"ResizeNearestNeighbor, ResizeNearestNeighborGrad (grappler clear list)", Clear, kGather},
    {"OneHot, TopK, TopKV2, Where, DynamicPartition, DynamicStitch (grappler clear list)", Clear, "no MLIR op on tensors for it in the input dialects"},
    {"Shape, ShapeN, Rank, Size (grappler clear list)", Clear, "produce index values (tensor.dim, tensor.rank), which are never cast"},
    {"Enter, Exit, Merge, Switch, NextIteration, TensorList* (grappler clear list)", Clear, kGraphOnly},
    {"IdentityN, StopGradient, PreventGradient, CheckNumerics (grappler clear list)", Clear, kGraphOnly},
};

//===----------------------------------------------------------------------===//
// mindspore
//===----------------------------------------------------------------------===//

constexpr PresetEntry kMindSpore[] = {
    {"linalg.matmul",                    Allow, "MatMul, MatMulExt, Dense, Addmm (amp auto_whitelist)"},
    {"linalg.batch_matmul",              Allow, "BatchMatMul, BatchMatMulExt, Baddbmm (amp auto_whitelist)"},
    {"linalg.batch_reduce_matmul",       Allow, "Addbmm (amp auto_whitelist)"},
    {"linalg.matvec",                    Allow, "Mv, Addmv (amp auto_whitelist)"},
    {"linalg.vecmat",                    Allow, "MatMulExt of a vector by a matrix (amp auto_whitelist)"},
    {"linalg.batch_matvec",              Allow, "BatchMatMulExt of matrices by vectors (amp auto_whitelist)"},
    {"linalg.batch_vecmat",              Allow, "BatchMatMulExt of vectors by matrices (amp auto_whitelist)"},
    {"linalg.mmt4d",                     Allow, "MatMul in a tiled layout (amp auto_whitelist)"},
    {"linalg.batch_mmt4d",               Allow, "BatchMatMul in a tiled layout (amp auto_whitelist)"},
    {"linalg.contract",                  Allow, "Einsum (amp auto_whitelist)"},
    {"linalg.conv_1d",                   Allow, "Convolution (amp auto_whitelist)"},
    {"linalg.conv_1d_nwc_wcf",           Allow, "Convolution (amp auto_whitelist)"},
    {"linalg.conv_1d_ncw_fcw",           Allow, "Convolution (amp auto_whitelist)"},
    {"linalg.depthwise_conv_1d_nwc_wc",  Allow, "Convolution with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_1d_ncw_cw",  Allow, "Convolution with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_1d_nwc_wcm", Allow, "Convolution with group = channels (amp auto_whitelist)"},
    {"linalg.conv_2d",                   Allow, "Conv2D, Conv2DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_2d_nhwc_hwcf",         Allow, "Conv2D, Conv2DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_2d_nhwc_fhwc",         Allow, "Conv2D, Conv2DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_2d_nchw_fchw",         Allow, "Conv2D, Conv2DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_2d_ngchw_fgchw",       Allow, "Conv2D with groups (amp auto_whitelist)"},
    {"linalg.conv_2d_ngchw_gfchw",       Allow, "Conv2D with groups (amp auto_whitelist)"},
    {"linalg.conv_2d_nhwgc_gfhwc",       Allow, "Conv2D with groups (amp auto_whitelist)"},
    {"linalg.depthwise_conv_2d_nhwc_hwc", Allow, "Conv2D with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_2d_nchw_chw", Allow, "Conv2D with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_2d_nhwc_hwcm", Allow, "Conv2D with group = channels (amp auto_whitelist)"},
    {"linalg.conv_3d",                   Allow, "Conv3D, Conv3DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_3d_ndhwc_dhwcf",       Allow, "Conv3D, Conv3DExt, Convolution (amp auto_whitelist)"},
    {"linalg.conv_3d_ncdhw_fcdhw",       Allow, "Conv3D, Conv3DExt, Convolution (amp auto_whitelist)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwc", Allow, "Conv3D with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_3d_ncdhw_cdhw", Allow, "Conv3D with group = channels (amp auto_whitelist)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwcm", Allow, "Conv3D with group = channels (amp auto_whitelist)"},

    {"math.powf",                        Deny,  "Pow (amp auto_blacklist)"},
    {"math.fpowi",                       Deny,  "Pow with an integer exponent (amp auto_blacklist)"},
    {"linalg.powf",                      Deny,  "Pow (amp auto_blacklist)"},
    {"math.acos",                        Deny,  "ACos (amp auto_blacklist)"},
    {"math.asin",                        Deny,  "Asin (amp auto_blacklist)"},
    {"math.cosh",                        Deny,  "Cosh (amp auto_blacklist)"},
    {"math.sinh",                        Deny,  "Sinh (amp auto_blacklist)"},
    {"math.tan",                         Deny,  "Tan (amp auto_blacklist)"},
    {"math.exp",                         Deny,  "Exp (amp auto_blacklist)"},
    {"linalg.exp",                       Deny,  "Exp (amp auto_blacklist)"},
    {"math.expm1",                       Deny,  "Expm1 (amp auto_blacklist)"},
    {"math.log",                         Deny,  "Log (amp auto_blacklist)"},
    {"linalg.log",                       Deny,  "Log (amp auto_blacklist)"},
    {"math.log10",                       Deny,  "Log10 (amp auto_blacklist)"},
    {"math.log1p",                       Deny,  "Log1p (amp auto_blacklist)"},
    {"math.log2",                        Deny,  "Log2 (amp auto_blacklist)"},
    {"linalg.reciprocal",                Deny,  "Reciprocal (amp auto_blacklist)"},
    {"math.rsqrt",                       Deny,  "Rsqrt (amp auto_blacklist)"},
    {"linalg.rsqrt",                     Deny,  "Rsqrt (amp auto_blacklist)"},
    {"linalg.softmax",                   Deny,  "Softmax (amp auto_blacklist)"},

    {"linalg.dot",                       Infer, "Dot (amp promote_list)"},
    {"tensor.scatter",                   Infer, "IndexPut (amp promote_list)"},
    {"arith.addf",                       Infer, "Add (in no amp list: runs in its inputs' type)"},
    {"linalg.add",                       Infer, "Add (in no amp list: runs in its inputs' type)"},
    {"arith.subf",                       Infer, "Sub (in no amp list: runs in its inputs' type)"},
    {"linalg.sub",                       Infer, "Sub (in no amp list: runs in its inputs' type)"},
    {"arith.mulf",                       Infer, "Mul (in no amp list: runs in its inputs' type)"},
    {"linalg.mul",                       Infer, "Mul (in no amp list: runs in its inputs' type)"},
    {"arith.divf",                       Infer, "Div, RealDiv (in no amp list: runs in its inputs' type)"},
    {"linalg.div",                       Infer, "Div, RealDiv (in no amp list: runs in its inputs' type)"},
    {"arith.remf",                       Infer, "FloorMod (in no amp list: runs in its inputs' type)"},
    {"arith.negf",                       Infer, "Neg (in no amp list: runs in its inputs' type)"},
    {"linalg.negf",                      Infer, "Neg (in no amp list: runs in its inputs' type)"},
    {"arith.maximumf",                   Infer, "Maximum, ReLU (in no amp list: runs in its inputs' type)"},
    {"linalg.max",                       Infer, "Maximum (in no amp list: runs in its inputs' type)"},
    {"arith.minimumf",                   Infer, "Minimum (in no amp list: runs in its inputs' type)"},
    {"linalg.min",                       Infer, "Minimum (in no amp list: runs in its inputs' type)"},
    {"arith.select",                     Infer, "Select (in no amp list: runs in its inputs' type)"},
    {"linalg.select",                    Infer, "Select (in no amp list: runs in its inputs' type)"},
    {"arith.cmpf",                       Infer, "Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual (in no amp list: runs in its inputs' type)"},
    {"math.tanh",                        Infer, "Tanh (in no amp list: runs in its inputs' type)"},
    {"linalg.tanh",                      Infer, "Tanh (in no amp list: runs in its inputs' type)"},
    {"math.erf",                         Infer, "Erf (in no amp list: runs in its inputs' type)"},
    {"linalg.erf",                       Infer, "Erf (in no amp list: runs in its inputs' type)"},
    {"math.erfc",                        Infer, "Erfc (in no amp list: runs in its inputs' type)"},
    {"math.sqrt",                        Infer, "Sqrt (in no amp list: runs in its inputs' type)"},
    {"linalg.sqrt",                      Infer, "Sqrt (in no amp list: runs in its inputs' type)"},
    {"linalg.square",                    Infer, "Square (in no amp list: runs in its inputs' type)"},
    {"math.absf",                        Infer, "Abs (in no amp list: runs in its inputs' type)"},
    {"linalg.abs",                       Infer, "Abs (in no amp list: runs in its inputs' type)"},
    {"math.sin",                         Infer, "Sin (in no amp list: runs in its inputs' type)"},
    {"math.cos",                         Infer, "Cos (in no amp list: runs in its inputs' type)"},
    {"math.atan",                        Infer, "Atan (in no amp list: runs in its inputs' type)"},
    {"math.atan2",                       Infer, "Atan2 (in no amp list: runs in its inputs' type)"},
    {"math.ceil",                        Infer, "Ceil (in no amp list: runs in its inputs' type)"},
    {"linalg.ceil",                      Infer, "Ceil (in no amp list: runs in its inputs' type)"},
    {"math.floor",                       Infer, "Floor (in no amp list: runs in its inputs' type)"},
    {"linalg.floor",                     Infer, "Floor (in no amp list: runs in its inputs' type)"},
    {"math.roundeven",                   Infer, "Round (in no amp list: runs in its inputs' type)"},
    {"math.clampf",                      Infer, "ClipByValue (in no amp list: runs in its inputs' type)"},
    {"math.isnan",                       Infer, "IsNan (in no amp list: runs in its inputs' type)"},
    {"math.isinf",                       Infer, "IsInf (in no amp list: runs in its inputs' type)"},
    {"math.isfinite",                    Infer, "IsFinite (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nhwc_max",          Infer, "MaxPool (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nchw_max",          Infer, "MaxPool (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nwc_max",           Infer, "MaxPool on a 1-D input (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_ncw_max",           Infer, "MaxPool on a 1-D input (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_ndhwc_max",         Infer, "MaxPool3D (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nhwc_sum",          Infer, "AvgPool, a sum pool then a division (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nchw_sum",          Infer, "AvgPool, a sum pool then a division (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_nwc_sum",           Infer, "AvgPool on a 1-D input (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_ncw_sum",           Infer, "AvgPool on a 1-D input (in no amp list: runs in its inputs' type)"},
    {"linalg.pooling_ndhwc_sum",         Infer, "AvgPool3D (in no amp list: runs in its inputs' type)"},

    {"tensor.reshape",                   Clear, "Reshape (in no amp list: moves data in its input's type)"},
    {"tensor.expand_shape",              Clear, "ExpandDims (in no amp list: moves data in its input's type)"},
    {"tensor.collapse_shape",            Clear, "Squeeze, Flatten (in no amp list: moves data in its input's type)"},
    {"tensor.cast",                      Clear, "Reshape to a static shape (in no amp list: moves data in its input's type)"},
    {"tensor.extract_slice",             Clear, "Slice, StridedSlice, Split (in no amp list: moves data in its input's type)"},
    {"tensor.extract",                   Clear, "Slice of one element (in no amp list: moves data in its input's type)"},
    {"tensor.insert_slice",              Clear, "TensorScatterUpdate of a slice (in no amp list: moves data in its input's type)"},
    {"tensor.insert",                    Clear, "TensorScatterUpdate of one element (in no amp list: moves data in its input's type)"},
    {"tensor.concat",                    Clear, "Concat, Stack (in no amp list: moves data in its inputs' type)"},
    {"tensor.pad",                       Clear, "Pad (in no amp list: moves data in its input's type)"},
    {"tensor.gather",                    Clear, "Gather, GatherNd (in no amp list: moves data in its input's type)"},
    {"tensor.splat",                     Clear, "Fill (in no amp list: moves data in its input's type)"},
    {"tensor.empty",                     Clear, "Zeros without a value (in no amp list: holds no data)"},
    {"linalg.fill",                      Clear, "Fill, Zeros, Ones (in no amp list: moves data in its input's type)"},
    {"linalg.transpose",                 Clear, "Transpose (in no amp list: moves data in its input's type)"},
    {"linalg.broadcast",                 Clear, "BroadcastTo (in no amp list: moves data in its input's type)"},
    {"linalg.copy",                      Clear, "Identity (in no amp list: moves data in its input's type)"},
};

constexpr UnmappedEntry kMindSporeUnmapped[] = {
    {"Conv2DTranspose, ConvTranspose2D, Conv3DTranspose (amp auto_whitelist)", Allow, kTransposedConv},
    {"PReLU (amp auto_whitelist)", Allow, kChain},
    {"Erfinv (amp auto_blacklist)", Deny, kNoMathOp},
    {"Softplus, SoftplusExt (amp auto_blacklist)", Deny, kChain},
    {"LayerNorm, LayerNormExt, BatchNorm, BatchNormExt, GroupNorm, Norm, Renorm (amp auto_blacklist)", Deny, kNorm},
    {"Pdist, Cdist (amp auto_blacklist)", Deny, kNorm},
    {"KLDivLoss, SmoothL1Loss, MultilabelMarginLoss, SoftMarginLoss, TripletMarginLoss, MultiMarginLoss, BCEWithLogitsLoss, L1LossExt, MSELossExt, NLLLoss, NLLLoss2d (amp auto_blacklist)", Deny, kLoss},
    {"LogSoftmax, LogSoftmaxExt (amp auto_blacklist)", Deny, kChain},
    {"ReduceProd, ProdExt, SumExt (amp auto_blacklist)", Deny, kReduction},
    {"CumProd, CumSum, CumsumExt (amp auto_blacklist)", Deny, kScan},
    {"Addcdiv, Addcmul, Cross (amp promote_list)", Infer, kChain},
    {"BiasAdd (amp promote_list)", Infer, "a broadcast add: linalg.broadcast, then linalg.add or arith.addf (infer)"},
    {"GridSampler2D, GridSampler3D (amp promote_list)", Infer, kGather},
};

//===----------------------------------------------------------------------===//
// mindspore-o1, mindspore-o2, mindspore-o3
//===----------------------------------------------------------------------===//

// AMP_WHITE_LIST, converted at amp_level="O1". It names cells and
// primitives; a cell converts all it computes, an MLIR op only itself. Other
// contractions and convolutions are allow by their structure, at every
// level.
constexpr PresetEntry kMindSporeO1[] = {
    {"linalg.matmul",                    Allow, "Dense (its matmul: the bias add is an op of its own, f32 at O1), MatMul (AMP_WHITE_LIST)"},
    {"linalg.batch_matmul",              Allow, "BatchMatMul (AMP_WHITE_LIST)"},
    {"linalg.conv_1d",                   Allow, "Conv1d (AMP_WHITE_LIST)"},
    {"linalg.conv_1d_nwc_wcf",           Allow, "Conv1d (AMP_WHITE_LIST)"},
    {"linalg.conv_1d_ncw_fcw",           Allow, "Conv1d (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_1d_nwc_wc",  Allow, "Conv1d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_1d_ncw_cw",  Allow, "Conv1d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_1d_nwc_wcm", Allow, "Conv1d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.conv_2d",                   Allow, "Conv2d, Conv2D, Conv2DBackpropInput (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_nhwc_hwcf",         Allow, "Conv2d, Conv2D, Conv2DBackpropInput (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_nhwc_fhwc",         Allow, "Conv2d, Conv2D, Conv2DBackpropInput (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_nchw_fchw",         Allow, "Conv2d, Conv2D, Conv2DBackpropInput (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_ngchw_fgchw",       Allow, "Conv2d with groups (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_ngchw_gfchw",       Allow, "Conv2d with groups (AMP_WHITE_LIST)"},
    {"linalg.conv_2d_nhwgc_gfhwc",       Allow, "Conv2d with groups (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_2d_nhwc_hwc", Allow, "Conv2d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_2d_nchw_chw", Allow, "Conv2d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_2d_nhwc_hwcm", Allow, "Conv2d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.conv_3d",                   Allow, "Conv3d, Conv3D (AMP_WHITE_LIST)"},
    {"linalg.conv_3d_ndhwc_dhwcf",       Allow, "Conv3d, Conv3D (AMP_WHITE_LIST)"},
    {"linalg.conv_3d_ncdhw_fcdhw",       Allow, "Conv3d, Conv3D (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwc", Allow, "Conv3d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_3d_ncdhw_cdhw", Allow, "Conv3d with group = channels (AMP_WHITE_LIST)"},
    {"linalg.depthwise_conv_3d_ndhwc_dhwcm", Allow, "Conv3d with group = channels (AMP_WHITE_LIST)"},
    {"arith.maximumf",                   Allow, "ReLU, max(x, 0) (AMP_WHITE_LIST); other maxima come along, which rounding cannot reorder"},
    {"linalg.max",                       Allow, "ReLU, max(x, 0) (AMP_WHITE_LIST); other maxima come along, which rounding cannot reorder"},
};

constexpr UnmappedEntry kMindSporeO1Unmapped[] = {
    {"Conv1dTranspose, Conv2dTranspose, Conv3dTranspose, Conv2DTranspose, Conv3DTranspose (AMP_WHITE_LIST)", Allow, kTransposedConv},
    {"LSTMCell, RNNCell, GRUCell (AMP_WHITE_LIST)", Allow, "no MLIR op: an RNN cell is a chain of matmuls (allow) and elementwise gates, which stay f32 at O1"},
    {"PReLU (AMP_WHITE_LIST)", Allow, kChain},
    {"Ger (AMP_WHITE_LIST)", Allow, "no named op: an outer product is an elementwise linalg.generic of one mulf on broadcast operands, which no name tells apart from other products"},
};

// AMP_BLACK_LIST, kept in f32 at amp_level="O2": the norm cells. In linalg
// on tensors a norm is a chain; what stays f32 is its statistics: the
// reductions (f32 accumulators, always) and the square roots of the
// variance. The centering, scale and shift are elementwise ops in no list.
constexpr PresetEntry kMindSporeO2[] = {
    {"math.rsqrt",                       Deny,  "BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm: 1 / sqrt(variance + eps) of their statistics (AMP_BLACK_LIST)"},
    {"linalg.rsqrt",                     Deny,  "BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm: 1 / sqrt(variance + eps) of their statistics (AMP_BLACK_LIST)"},
    {"math.sqrt",                        Deny,  "BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm: sqrt(variance + eps) of their statistics (AMP_BLACK_LIST)"},
    {"linalg.sqrt",                      Deny,  "BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm: sqrt(variance + eps) of their statistics (AMP_BLACK_LIST)"},
};

constexpr UnmappedEntry kMindSporeO2Unmapped[] = {
    {"BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm (AMP_BLACK_LIST)", Deny, "no single MLIR op: their statistics stay f32 (reductions accumulate in f32; sqrt and rsqrt are mapped), while the centering, scale and shift are elementwise ops in no list, low at O2"},
};

// clang-format on

/// The entries of `entries` in `category`: derived lists, not copies, so
/// that a preset and the presets made from it cannot drift apart.
template <typename T>
std::vector<T> withCategory(llvm::ArrayRef<T> entries, OpCategory category) {
  std::vector<T> result;
  for (const T &entry : entries)
    if (entry.category == category)
      result.push_back(entry);
  return result;
}

/// `first`, then the entries of `rest` for ops that `first` does not list.
std::vector<PresetEntry> overriding(llvm::ArrayRef<PresetEntry> first,
                                    llvm::ArrayRef<PresetEntry> rest) {
  std::vector<PresetEntry> result(first.begin(), first.end());
  for (const PresetEntry &entry : rest)
    if (llvm::none_of(first, [&](const PresetEntry &listed) {
          return listed.opName == entry.opName;
        }))
      result.push_back(entry);
  return result;
}

template <typename T>
std::vector<T> concat(llvm::ArrayRef<T> first, llvm::ArrayRef<T> second) {
  std::vector<T> result(first.begin(), first.end());
  result.insert(result.end(), second.begin(), second.end());
  return result;
}
} // namespace

llvm::ArrayRef<PresetInfo> amp::getPresets() {
  static const std::vector<PresetEntry> tensorCoresOnly =
      withCategory<PresetEntry>(kTf, Allow);
  static const std::vector<UnmappedEntry> tensorCoresOnlyUnmapped =
      withCategory<UnmappedEntry>(kTfUnmapped, Allow);
  // MindSpore's levels share the auto lists' data movement (clear); O2 keeps
  // the auto_blacklist's numerically unsafe ops in f32 beside its own list.
  static const std::vector<PresetEntry> dataMovement =
      withCategory<PresetEntry>(kMindSpore, Clear);
  static const std::vector<PresetEntry> mindSporeO1 =
      concat<PresetEntry>(kMindSporeO1, dataMovement);
  static const std::vector<PresetEntry> mindSporeO2 = concat<PresetEntry>(
      overriding(kMindSporeO2, withCategory<PresetEntry>(kMindSpore, Deny)),
      dataMovement);
  static const std::vector<UnmappedEntry> mindSporeO2Unmapped =
      concat<UnmappedEntry>(
          kMindSporeO2Unmapped,
          withCategory<UnmappedEntry>(kMindSporeUnmapped, Deny));
  static const PresetInfo presets[] = {
      {"torch",
       "PyTorch's CUDA autocast lists: lower_precision_fp is allow, fp32 is "
       "deny, promote and ops in no list are infer, data movement is clear",
       kTorch, kTorchUnmapped},
      {"tf",
       "TensorFlow grappler's CUDA auto_mixed_precision allow, deny, infer "
       "and clear lists",
       kTf, kTfUnmapped},
      {"mindspore",
       "MindSpore's amp_level=\"auto\" lists: auto_whitelist is allow, "
       "auto_blacklist is deny, promote_list and ops in no list are infer, "
       "data movement is clear",
       kMindSpore, kMindSporeUnmapped},
      {"tensor-cores-only",
       "grappler's TENSOR_CORES_ONLY level: the tf allow list alone; every "
       "other op is unknown",
       tensorCoresOnly, tensorCoresOnlyUnmapped},
      {"mindspore-o1",
       "MindSpore's amp_level=\"O1\": AMP_WHITE_LIST is allow, data movement "
       "is clear, every other op is unknown and stays f32 (deny)",
       mindSporeO1, kMindSporeO1Unmapped, UnknownOpMode::Deny},
      {"mindspore-o2",
       "MindSpore's amp_level=\"O2\": AMP_BLACK_LIST (the norms' statistics) "
       "and the numerically unsafe ops of the auto_blacklist are deny, data "
       "movement is clear, every other op is unknown and low (allow)",
       mindSporeO2, mindSporeO2Unmapped, UnknownOpMode::Allow},
      {"mindspore-o3",
       "MindSpore's amp_level=\"O3\": data movement is clear, every other op "
       "is unknown and low (allow)",
       dataMovement,
       {},
       UnknownOpMode::Allow},
  };
  return presets;
}
