//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "amp/Runner/Npy.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstring>

using namespace mlir::amp;

namespace {

/// A .npy file as NumPy 1.x writes it: version 1.0, header padded to 64.
std::string makeNpy(llvm::StringRef dict, llvm::StringRef payload,
                    char major = 1) {
  std::string header = dict.str();
  size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes = "\x93NUMPY";
  bytes.push_back(major);
  bytes.push_back(0);
  size_t n = header.size();
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return bytes + header + payload.str();
}

std::string errorOf(llvm::Expected<HostArray> array) {
  EXPECT_FALSE(static_cast<bool>(array));
  return array ? "" : llvm::toString(array.takeError());
}

TEST(Npy, ParsesFloat32Matrix) {
  float values[6] = {1, 2, 3, 4, 5, -6.5};
  std::string payload(reinterpret_cast<char *>(values), sizeof(values));
  llvm::Expected<HostArray> array = parseNpy(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              payload),
      "m.npy");
  ASSERT_TRUE(static_cast<bool>(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->getDType(), DType::F32);
  EXPECT_EQ(array->getShape(), llvm::ArrayRef<int64_t>({2, 3}));
  EXPECT_EQ(array->getAsDouble(5), -6.5);
}

TEST(Npy, ParsesVersion2ScalarsAndBool) {
  std::string payload("\x01", 1);
  llvm::Expected<HostArray> array = parseNpy(
      makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
              payload, /*major=*/2),
      "b.npy");
  ASSERT_TRUE(static_cast<bool>(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->getDType(), DType::Bool);
  EXPECT_TRUE(array->getShape().empty());
  EXPECT_EQ(array->getAsDouble(0), 1.0);
}

TEST(Npy, RoundTripsEveryDType) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I8, DType::I32, DType::I64, DType::Bool}) {
    HostArray array(dtype, {3, 1, 2});
    for (int64_t i = 0; i < array.getNumElements(); ++i)
      array.setFromDouble(i, dtype == DType::Bool ? i % 2 : i - 2);
    llvm::Expected<HostArray> back = parseNpy(serializeNpy(array), "x.npy");
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_TRUE(*back == array) << getDTypeName(dtype).str();
  }
}

TEST(Npy, WritesTheHeaderNumPyExpects) {
  HostArray vector(DType::I32, {4});
  std::string bytes = serializeNpy(vector);
  EXPECT_EQ(bytes.size() % 64, 16u); // data starts 64-byte aligned
  EXPECT_NE(bytes.find("{'descr': '<i4', 'fortran_order': False, "
                       "'shape': (4,), }"),
            std::string::npos);
  HostArray scalar(DType::F32, {});
  EXPECT_NE(serializeNpy(scalar).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, ConvertsHalfAndBFloat16) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(floatToHalf(70000.0f), 0x7c00); // overflow to inf
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16(1.00390625f), 0x3f80); // tie rounds to even
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(NAN))));
}

TEST(Npy, RejectsBadFiles) {
  EXPECT_NE(errorOf(parseNpy("hello", "a.npy")).find("a.npy: not a .npy"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(makeNpy("{'descr': '>f4', 'fortran_order': "
                                     "False, 'shape': (1,), }",
                                     "abcd"),
                             "b.npy"))
                .find("unsupported dtype '>f4'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': "
                                     "True, 'shape': (1,), }",
                                     "abcd"),
                             "c.npy"))
                .find("Fortran-order"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': "
                                     "False, 'shape': (2,), }",
                                     "abcd"),
                             "d.npy"))
                .find("holds 4 bytes of data; shape and dtype need 8"),
            std::string::npos);
  EXPECT_NE(errorOf(readNpy("/nonexistent/e.npy")).find("cannot read"),
            std::string::npos);
}

} // namespace
