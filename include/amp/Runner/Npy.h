//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The array format of amp-run's inputs and outputs (NumPy's .npy, versions 1
// to 3, C order, little endian). bf16 has no NumPy dtype of its own: the
// ml_dtypes package stores it as the 2-byte void type '<V2', which is read
// and written as bf16 here.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_NPY_H
#define AMP_RUNNER_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::amp {

/// The element types amp-run exchanges with compiled steps.
enum class DType { F32, F64, F16, BF16, I8, I32, I64, Bool };

/// The size of one element in bytes (Bool: one byte, as MLIR stores i1).
unsigned getDTypeSize(DType dtype);
/// The readable name: "f32", "f16", "bf16", "i32", "bool", ...
llvm::StringRef getDTypeName(DType dtype);
/// The NumPy descr of a dtype ('<f4', '<V2' for bf16, '|b1', ...).
llvm::StringRef getNpyDescr(DType dtype);
/// The dtype of a NumPy descr, if supported.
std::optional<DType> parseNpyDescr(llvm::StringRef descr);

/// A dense C-order array in host memory. The storage is 8-byte aligned, so a
/// compiled step can read and write it in place through a memref descriptor.
class HostArray {
public:
  HostArray() = default;
  HostArray(DType dtype, llvm::ArrayRef<int64_t> shape);

  DType getDType() const { return dtype; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getNumElements() const;
  size_t getNumBytes() const { return getNumElements() * getDTypeSize(dtype); }
  char *data() { return reinterpret_cast<char *>(storage.data()); }
  const char *data() const {
    return reinterpret_cast<const char *>(storage.data());
  }
  /// Element `index` (flat, C order) converted to double; floats of any
  /// width, integers and booleans.
  double getAsDouble(int64_t index) const;
  /// Sets element `index` from a double, rounding to nearest even for the
  /// float types.
  void setFromDouble(int64_t index, double value);
  /// Bitwise equality of dtype, shape and contents.
  bool operator==(const HostArray &other) const;

private:
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t> shape;
  std::vector<uint64_t> storage;
};

/// Parses the contents of a .npy file; `name` (a path) is used in errors.
llvm::Expected<HostArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);
/// Reads a .npy file.
llvm::Expected<HostArray> readNpy(llvm::StringRef path);
/// The bytes of a version 1.0 .npy file holding `array`.
std::string serializeNpy(const HostArray &array);
/// Writes `array` to a .npy file.
llvm::Error writeNpy(llvm::StringRef path, const HostArray &array);

/// IEEE half and bfloat16 conversions (round to nearest even, NaN kept).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBF16(float value);

} // namespace mlir::amp

#endif // AMP_RUNNER_NPY_H
