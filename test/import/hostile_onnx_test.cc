// ONNX files built to attack the importer (issue 40): sizes that overflow or
// exceed what the file holds, external data that escapes the model's
// directory or is not a file, malformed external-data fields, names defined
// twice, and shape arithmetic that asks for huge folded constants. Each must
// fail with a clear error naming the tensor or node, before allocating.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cagr/importer.h"
#include "cagr/reference.h"
#include "common/onnx_builder.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;
using testing::OnnxBuilder;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;

fs::path freshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("cagr_hostile_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// y = Gather(W, ids) over a table `W` declared [rows, 4].
OnnxBuilder gatherModel(int64_t rows) {
  OnnxBuilder b;
  b.input("ids", onnx::TensorProto::INT64, {"B"});
  b.output("y");
  onnx::TensorProto* w = b.model().mutable_graph()->add_initializer();
  w->set_name("W");
  w->set_data_type(kF32);
  w->add_dims(rows);
  w->add_dims(4);
  b.node("Gather", {"W", "ids"}, {"y"});
  return b;
}

void setExternal(OnnxBuilder& b, const std::string& location, const std::string& offset = "",
                 const std::string& length = "") {
  onnx::TensorProto* w = b.model().mutable_graph()->mutable_initializer(0);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* kv = w->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

void writeBytes(const fs::path& p, size_t n) {
  std::ofstream out(p, std::ios::binary);
  std::string zeros(n, '\0');
  out.write(zeros.data(), static_cast<std::streamsize>(n));
}

void expectError(const StatusOr<Graph>& g, const std::string& fragment) {
  ASSERT_FALSE(g.isOk()) << "imported, expected an error containing: " << fragment;
  EXPECT_NE(g.status().message().find(fragment), std::string::npos) << g.status().message();
}

TEST(HostileOnnx, OverflowingInitializerShapeIsRefused) {
  // [2^60, 4] f32 with no data: the element count wraps int64 arithmetic.
  auto b = gatherModel(int64_t{1} << 60);
  expectError(b.import("hostile_overflow"), "tensor 'W'");
}

TEST(HostileOnnx, InitializerLargerThanItsDataIsRefusedBeforeAllocating) {
  // 2^34 rows x 4 floats = 256 GiB declared by a file of a few hundred bytes.
  auto b = gatherModel(int64_t{1} << 34);
  b.model().mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(16, '\0'));
  expectError(b.import("hostile_declared"), "declares");
}

TEST(HostileOnnx, ExternalDataAbsolutePathIsRefused) {
  auto b = gatherModel(2);
  setExternal(b, "/etc/passwd");
  expectError(importOnnx(b.saveAs(freshDir("abs"), "m.onnx")), "absolute path");
}

TEST(HostileOnnx, ExternalDataParentPathIsRefused) {
  auto b = gatherModel(2);
  setExternal(b, "../../../../etc/passwd");
  expectError(importOnnx(b.saveAs(freshDir("dotdot"), "m.onnx")), "leaves the model's directory");
}

TEST(HostileOnnx, ExternalDataSymlinkOutOfTheDirectoryIsRefused) {
  fs::path outside = freshDir("outside");
  writeBytes(outside / "w.bin", 32);
  fs::path dir = freshDir("symlink");
  fs::create_symlink(outside / "w.bin", dir / "w.bin");
  auto b = gatherModel(2);
  setExternal(b, "w.bin");
  expectError(importOnnx(b.saveAs(dir, "m.onnx")), "outside the model's directory");
}

TEST(HostileOnnx, ExternalDataThatIsNotAFileIsRefused) {
  fs::path dir = freshDir("fifo");
  ASSERT_EQ(mkfifo((dir / "w.bin").c_str(), 0600), 0);
  auto b = gatherModel(2);
  setExternal(b, "w.bin");
  expectError(importOnnx(b.saveAs(dir, "m.onnx")), "not a regular file");  // and does not hang
}

TEST(HostileOnnx, MalformedExternalDataFieldsAreRefused) {
  fs::path dir = freshDir("fields");
  writeBytes(dir / "w.bin", 32);
  for (auto [offset, length, fragment] : {std::tuple{"abc", "", "offset 'abc'"}, {"", "abc", "length 'abc'"},
                                          {"-8", "", "offset '-8'"}, {"99999999999999999999", "", "offset"},
                                          {"16", "", "too short"}, {"", "16", "has 16 bytes"}}) {
    auto b = gatherModel(2);
    setExternal(b, "w.bin", offset, length);
    expectError(importOnnx(b.saveAs(dir, "m.onnx")), fragment);
  }
  auto ok = gatherModel(2);
  setExternal(ok, "w.bin", "0", "32");
  auto g = importOnnx(ok.saveAs(dir, "m.onnx"));
  EXPECT_TRUE(g.isOk()) << g.status().message();
}

TEST(HostileOnnx, ExternalDataInASubdirectoryIsAccepted) {
  fs::path dir = freshDir("subdir");
  fs::create_directories(dir / "data");
  writeBytes(dir / "data" / "w.bin", 32);
  auto b = gatherModel(2);
  setExternal(b, "data/w.bin");
  auto g = importOnnx(b.saveAs(dir, "m.onnx"));
  EXPECT_TRUE(g.isOk()) << g.status().message();
}

// A large external table (>= 1 MiB) is mapped, not read: the constant points
// into the file's mapping and gathers the right rows, also at an offset.
TEST(HostileOnnx, LargeExternalDataIsMappedAndReadsTheRightRows) {
  fs::path dir = freshDir("mapped");
  const int64_t rows = 1 << 17;  // x 4 floats = 2 MiB
  {
    std::ofstream out(dir / "w.bin", std::ios::binary);
    std::string pad(4096, '\0');
    out.write(pad.data(), static_cast<std::streamsize>(pad.size()));
    for (int64_t r = 0; r < rows; ++r) {
      for (int k = 0; k < 4; ++k) {
        float v = static_cast<float>(r) + 0.25f * static_cast<float>(k);
        out.write(reinterpret_cast<const char*>(&v), sizeof v);
      }
    }
  }
  auto b = gatherModel(rows);
  setExternal(b, "w.bin", "4096", std::to_string(rows * 16));
  auto g = importOnnx(b.saveAs(dir, "m.onnx"));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  // The table's bytes lie in a mapping of w.bin (/proc/self/maps).
  const std::byte* table = nullptr;
  for (size_t v = 0; v < g->numValues(); ++v) {
    if (g->isConstant(static_cast<ValueId>(v)) && g->constant(static_cast<ValueId>(v))->numel() == rows * 4) {
      table = g->constant(static_cast<ValueId>(v))->rawData();
    }
  }
  ASSERT_NE(table, nullptr);
  bool mapped = false;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find((dir / "w.bin").string()) == std::string::npos) continue;
    auto dash = line.find('-'), space = line.find(' ');
    uintptr_t lo = std::stoull(line.substr(0, dash), nullptr, 16), hi = std::stoull(line.substr(dash + 1, space), nullptr, 16);
    auto p = reinterpret_cast<uintptr_t>(table);
    mapped = mapped || (p >= lo && p < hi);
  }
  EXPECT_TRUE(mapped) << "the table should be a view of the mapped file";
  Tensor ids(DType::kI64, {3});
  ids.data<int64_t>()[0] = 0;
  ids.data<int64_t>()[1] = rows - 1;
  ids.data<int64_t>()[2] = 77777;
  auto out = runReference(*g, {{"ids", ids}});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  for (int64_t i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ((*out)[0].getF64(i * 4 + k), static_cast<double>(ids.data<int64_t>()[i]) + 0.25 * k);
    }
  }
}

TEST(HostileOnnx, NamesDefinedTwiceAreRefused) {
  OnnxBuilder twiceOut;
  twiceOut.input("x", kF32, {"B", 4});
  twiceOut.output("y");
  twiceOut.output("y");
  twiceOut.node("Relu", {"x"}, {"y"});
  expectError(twiceOut.import("hostile_dup_out"), "graph output 'y' is listed twice");

  OnnxBuilder twiceDef;
  twiceDef.input("x", kF32, {"B", 4});
  twiceDef.output("y");
  twiceDef.node("Relu", {"x"}, {"y"}, "first");
  twiceDef.node("Sigmoid", {"x"}, {"y"}, "second");
  expectError(twiceDef.import("hostile_dup_def"), "node 'second' (Sigmoid) defines 'y'");
}

TEST(HostileOnnx, HugeFoldedShapeArithmeticIsRefused) {
  OnnxBuilder range;
  range.input("x", kF32, {"B", 4});
  range.output("y", onnx::TensorProto::INT64);
  range.ints("s", {}, {0});
  range.ints("l", {}, {int64_t{1} << 40});
  range.ints("d", {}, {1});
  range.node("Range", {"s", "l", "d"}, {"y"}, "big_range");
  expectError(range.import("hostile_range"), "at most 2^26");

  OnnxBuilder cos;
  cos.input("x", kF32, {"B", 4});
  cos.output("y");
  cos.ints("shape", {2}, {int64_t{1} << 40, int64_t{1} << 40});
  cos.node("ConstantOfShape", {"shape"}, {"y"}, "big_fill");
  expectError(cos.import("hostile_cos"), "big_fill");
}

TEST(HostileOnnx, HugeDeclaredInputIsRefused) {
  OnnxBuilder b;
  b.input("x", kF32, {"B", int64_t{1} << 62});
  b.output("y");
  b.node("Relu", {"x"}, {"y"});
  expectError(b.import("hostile_input"), "input 'x'");
}

}  // namespace
}  // namespace cagr
