//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Format: magic "\x93NUMPY", major and minor version bytes, the header length
// (2 bytes little endian in version 1, 4 bytes in versions 2 and 3), then a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and a newline so that the data starts 64-byte aligned.
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/Npy.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>

using namespace mlir;
using namespace mlir::amp;
using llvm::APFloat;
using llvm::StringRef;

namespace {
struct DTypeInfo {
  DType dtype;
  StringRef name;
  StringRef descr;
  unsigned size;
};
} // namespace

// One row per dtype: amp-run's name, NumPy's descr, the element size.
static constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", "<f4", 4},  {DType::F64, "f64", "<f8", 8},
    {DType::F16, "f16", "<f2", 2},  {DType::BF16, "bf16", "<V2", 2},
    {DType::I8, "i8", "|i1", 1},    {DType::I32, "i32", "<i4", 4},
    {DType::I64, "i64", "<i8", 8},  {DType::Bool, "bool", "|b1", 1},
};

static const DTypeInfo &getInfo(DType dtype) {
  return *llvm::find_if(kDTypes,
                        [&](const DTypeInfo &i) { return i.dtype == dtype; });
}

unsigned amp::getDTypeSize(DType dtype) { return getInfo(dtype).size; }
StringRef amp::getDTypeName(DType dtype) { return getInfo(dtype).name; }
StringRef amp::getNpyDescr(DType dtype) { return getInfo(dtype).descr; }

std::optional<DType> amp::parseNpyDescr(StringRef descr) {
  // Single-byte types may be written with any byte-order mark.
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=') &&
      (descr.ends_with("b1") || descr.ends_with("i1")))
    descr = descr.drop_front();
  for (const DTypeInfo &info : kDTypes) {
    StringRef known = info.descr;
    if (descr == known || (known[0] == '|' && descr == known.drop_front()))
      return info.dtype;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Float conversions
//===----------------------------------------------------------------------===//

static uint16_t convertFromFloat(float value, const llvm::fltSemantics &to) {
  APFloat f(value);
  bool lost;
  f.convert(to, APFloat::rmNearestTiesToEven, &lost);
  return f.bitcastToAPInt().getZExtValue();
}

static float convertToFloat(uint16_t bits, const llvm::fltSemantics &from) {
  APFloat f(from, llvm::APInt(16, bits));
  bool lost;
  f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToFloat();
}

float amp::halfToFloat(uint16_t bits) {
  return convertToFloat(bits, APFloat::IEEEhalf());
}
uint16_t amp::floatToHalf(float value) {
  return convertFromFloat(value, APFloat::IEEEhalf());
}
float amp::bf16ToFloat(uint16_t bits) {
  return convertToFloat(bits, APFloat::BFloat());
}
uint16_t amp::floatToBF16(float value) {
  return convertFromFloat(value, APFloat::BFloat());
}

//===----------------------------------------------------------------------===//
// HostArray
//===----------------------------------------------------------------------===//

HostArray::HostArray(DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape) {
  storage.assign((getNumBytes() + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
}

int64_t HostArray::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T> static T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> static void store(char *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double HostArray::getAsDouble(int64_t index) const {
  const char *p = data() + index * getDTypeSize(dtype);
  switch (dtype) {
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::F16:
    return halfToFloat(load<uint16_t>(p));
  case DType::BF16:
    return bf16ToFloat(load<uint16_t>(p));
  case DType::I8:
    return load<int8_t>(p);
  case DType::I32:
    return load<int32_t>(p);
  case DType::I64:
    return load<int64_t>(p);
  case DType::Bool:
    return load<uint8_t>(p) != 0;
  }
  llvm_unreachable("unknown dtype");
}

void HostArray::setFromDouble(int64_t index, double value) {
  char *p = data() + index * getDTypeSize(dtype);
  switch (dtype) {
  case DType::F32:
    return store<float>(p, value);
  case DType::F64:
    return store<double>(p, value);
  case DType::F16:
    return store<uint16_t>(p, floatToHalf(value));
  case DType::BF16:
    return store<uint16_t>(p, floatToBF16(value));
  case DType::I8:
    return store<int8_t>(p, value);
  case DType::I32:
    return store<int32_t>(p, value);
  case DType::I64:
    return store<int64_t>(p, value);
  case DType::Bool:
    return store<uint8_t>(p, value != 0.0);
  }
}

bool HostArray::operator==(const HostArray &other) const {
  return dtype == other.dtype && shape == other.shape &&
         std::memcmp(data(), other.data(), getNumBytes()) == 0;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static llvm::Error npyError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + ": " + message);
}

/// The text after `'key':` in the header dict, with leading spaces dropped.
static std::optional<StringRef> findValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

llvm::Expected<HostArray> amp::parseNpy(StringRef bytes, StringRef name) {
  if (!bytes.consume_front("\x93NUMPY"))
    return npyError(name, "not a .npy file (no \\x93NUMPY magic)");
  if (bytes.size() < 4)
    return npyError(name, "truncated .npy header");
  unsigned major = static_cast<unsigned char>(bytes[0]);
  if (major < 1 || major > 3)
    return npyError(name, "unsupported .npy version " + llvm::Twine(major));
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 2 + lengthBytes)
    return npyError(name, "truncated .npy header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(static_cast<unsigned char>(bytes[2 + i])) << (8 * i);
  bytes = bytes.drop_front(2 + lengthBytes);
  if (bytes.size() < headerLength)
    return npyError(name, "truncated .npy header");
  StringRef header = bytes.take_front(headerLength);
  StringRef payload = bytes.drop_front(headerLength);

  std::optional<StringRef> descr = findValue(header, "descr");
  std::optional<StringRef> order = findValue(header, "fortran_order");
  std::optional<StringRef> shapeText = findValue(header, "shape");
  if (!descr || !order || !shapeText)
    return npyError(name, "header lacks 'descr', 'fortran_order' or 'shape'");
  if (!descr->consume_front("'"))
    return npyError(name, "structured dtypes are not supported");
  StringRef descrName = descr->take_until([](char c) { return c == '\''; });
  std::optional<DType> dtype = parseNpyDescr(descrName);
  if (!dtype)
    return npyError(name, "unsupported dtype '" + descrName +
                              "' (supported: float32, float64, float16, "
                              "bfloat16 as '<V2', int8, int32, int64, bool; "
                              "little endian)");
  if (!order->starts_with("False"))
    return npyError(name, "Fortran-order arrays are not supported; save a "
                          "C-order copy (numpy.ascontiguousarray)");
  if (!shapeText->consume_front("("))
    return npyError(name, "malformed shape in the header");
  StringRef dims = shapeText->take_until([](char c) { return c == ')'; });
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return npyError(name, "malformed shape (" + dims + ") in the header");
    shape.push_back(dim);
  }

  // The size the header claims, checked against the data before anything is
  // allocated: a hostile shape must not overflow or exhaust memory.
  int64_t needed = getDTypeSize(*dtype);
  for (int64_t dim : shape)
    if (llvm::MulOverflow(needed, dim, needed))
      return npyError(name, "shape (" + dims + ") in the header is too large");
  if (payload.size() != static_cast<uint64_t>(needed))
    return npyError(name, "holds " + llvm::Twine(payload.size()) +
                              " bytes of data; shape and dtype need " +
                              llvm::Twine(needed));
  HostArray array(*dtype, shape);
  std::memcpy(array.data(), payload.data(), payload.size());
  return array;
}

llvm::Expected<HostArray> amp::readNpy(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code ec = file.getError())
    return npyError(path, "cannot read: " + ec.message());
  return parseNpy((*file)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string amp::serializeNpy(const HostArray &array) {
  std::string header;
  llvm::raw_string_ostream os(header);
  os << "{'descr': '" << getNpyDescr(array.getDType())
     << "', 'fortran_order': False, 'shape': (";
  llvm::interleave(array.getShape(), os, ", ");
  // A Python tuple of one element needs its trailing comma.
  os << (array.getShape().size() == 1 ? ",), }" : "), }");
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::string bytes = "\x93NUMPY";
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  bytes.append(array.data(), array.getNumBytes());
  return bytes;
}

llvm::Error amp::writeNpy(StringRef path, const HostArray &array) {
  std::string bytes = serializeNpy(array);
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << bytes;
    return llvm::Error::success();
  });
}
