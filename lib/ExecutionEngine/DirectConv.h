//===- DirectConv.h - Convolutions that read and write f16 and bf16 -------===//
//
// The runtime's own forward convolutions and filter gradients for f16 and
// bf16 images on hosts where oneDNN has no kernels for them faster than its
// f32 ones (AVX2 hosts): they compute in f32, as oneDNN's f32 kernels would
// after the operands were extended, but extend the images a band of rows at
// a time into buffers that stay in cache, and round each output as they
// store it. So no extended copy of an image and no f32 copy of an output
// goes through memory. The filter gradients take f32 images too.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_EXECUTIONENGINE_DIRECTCONV_H
#define AMP_LIB_EXECUTIONENGINE_DIRECTCONV_H

#include "Avx2Support.h"

namespace amp::cpu {

/// A 4-d array of `type`: element (i0, i1, i2, i3) at `data` +
/// i0 * strides[0] + ... + i3 * strides[3] elements.
struct ArrayRef4 {
  void *data;
  ElementType type;
  int64_t sizes[4], strides[4];
};

/// The window of a 2-d convolution: strides, dilations (1: none) and the
/// padding before and after each spatial dimension, as oneDNN takes them:
/// the output's size is (size + padding - window) / stride + 1, rounded
/// down.
struct ConvWindow {
  int64_t strides[2], dilations[2], padBefore[2], padAfter[2];
};

/// Whether directConv computes the convolution of `input` (N x C x H x W)
/// by `filter` (F x C x KH x KW) into `output` (N x F x OH x OW): on hosts
/// with AVX2, FMA and F16C, for f16 or bf16 inputs of one type, an f32
/// output or one of the inputs' type, output channels one element apart (a
/// channels-last image; the input any layout, read fastest channels-last),
/// no dilation, no negative padding before, and an output of the window's
/// size.
bool canDirectConv(const ArrayRef4 &input, const ArrayRef4 &filter,
                   const ArrayRef4 &output, const ConvWindow &window);

/// `output` = the convolution (not accumulating). Each element is the f32
/// sum of its products, over the filter's rows in order and along each row
/// over its columns and channels in order, fused multiply-adds, rounded
/// once to the output's type: the same on any number of threads. The
/// threads are the calling thread's OpenMP team. Returns false where it
/// could not allocate its buffers (then `output` is partly written).
/// Requires canDirectConv.
bool directConv(const ArrayRef4 &input, const ArrayRef4 &filter,
                const ArrayRef4 &output, const ConvWindow &window);

/// Whether directConvWeightGradient computes the filter gradient
/// (F x C x KH x KW, f32) of the convolution of `input` (N x C x H x W)
/// whose output gradient is `gradient` (N x F x OH x OW) of the input's
/// type: f16 or bf16 where canDirectConv would take the forward
/// convolution, and f32 likewise.
bool canDirectConvWeightGradient(const ArrayRef4 &input,
                                 const ArrayRef4 &gradient,
                                 const ArrayRef4 &filterGradient,
                                 const ConvWindow &window);

/// `filterGradient` = the filter gradient, or += it with `accumulate`.
/// Each element is the f32 sum of its products over the images in order,
/// each image's in bands of output rows whose products are summed first
/// (fused multiply-adds, in order) and then added: the same on any number
/// of threads. Returns false, computing nothing, where it could not
/// allocate its buffers. Requires canDirectConvWeightGradient.
bool directConvWeightGradient(const ArrayRef4 &input, const ArrayRef4 &gradient,
                              const ArrayRef4 &filterGradient,
                              const ConvWindow &window, bool accumulate);

} // namespace amp::cpu

#endif // AMP_LIB_EXECUTIONENGINE_DIRECTCONV_H
