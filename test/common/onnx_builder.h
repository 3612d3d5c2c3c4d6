// Builds small ONNX models in tests with the onnx protobuf API, writes them
// to a temporary file and imports them: the import tests reproduce what
// third-party exporters emit without committing model files.
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

#include "cagr/importer.h"

namespace cagr::testing {

/// A dim of a declared input/output: a size, or a dim_param name ("" = none).
using OnnxDim = std::variant<int64_t, std::string>;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }

  void input(const std::string& name, int32_t elemType, const std::vector<OnnxDim>& dims) {
    declare(model_.mutable_graph()->add_input(), name, elemType, dims);
  }
  void output(const std::string& name, int32_t elemType = onnx::TensorProto::FLOAT) {
    declare(model_.mutable_graph()->add_output(), name, elemType, std::nullopt);
  }
  /// An f32 (or i64 with `ints`) initializer.
  void initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& data) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    fill(t, name, dims, onnx::TensorProto::FLOAT);
    for (float f : data) t->add_float_data(f);
  }
  void ints(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& data) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    fill(t, name, dims, onnx::TensorProto::INT64);
    for (int64_t v : data) t->add_int64_data(v);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                        const std::string& name = "") {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  /// A subgraph attribute (If branches): returns the branch graph to fill.
  static onnx::GraphProto& branch(onnx::NodeProto& n, const std::string& name) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name);
    return *a->mutable_g();
  }

  /// The model being built, for what the helpers above do not cover.
  onnx::ModelProto& model() { return model_; }

  /// Writes the model to a fresh file under the temp directory; returns its path.
  std::string save(const std::string& stem) const {
    std::string path = (std::filesystem::temp_directory_path() / ("cagr_" + stem + ".onnx")).string();
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return path;
  }
  /// Writes the model to `dir`/`file`; returns its path.
  std::string saveAs(const std::filesystem::path& dir, const std::string& file) const {
    std::filesystem::create_directories(dir);
    std::string path = (dir / file).string();
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return path;
  }
  StatusOr<Graph> import(const std::string& stem, ImportReport* report = nullptr) const {
    return importOnnx(save(stem), {}, report);
  }

 private:
  static void declare(onnx::ValueInfoProto* v, const std::string& name, int32_t elemType,
                      const std::optional<std::vector<OnnxDim>>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    if (!dims) return;
    auto* shape = t->mutable_shape();
    for (const auto& d : *dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d)) {
        dim->set_dim_value(std::get<int64_t>(d));
      } else if (!std::get<std::string>(d).empty()) {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }
  static void fill(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims, int32_t type) {
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
  }

  onnx::ModelProto model_;
};

}  // namespace cagr::testing
