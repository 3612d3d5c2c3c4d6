// importOnnx: parse the protobuf, declare inputs with symbolic dims, import
// node by node (handlers in onnx_ops.cc / shape_ops.cc / embedding_bag_loop.cc),
// then clean up and recognise rec-model subgraphs.
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "import/context.h"

namespace cagr {
namespace {

using import::Context;

StatusOr<onnx::ModelProto> loadModel(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return notFound("cannot read '" + path + "': no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot open '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&coded)) {
    return corrupt(path + ": not a valid ONNX model (truncated or corrupt protobuf)");
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    return corrupt(path + ": not a valid ONNX model (no graph or no IR version)");
  }
  return model;
}

int64_t defaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

// Declares the graph inputs; the symbol in dim 0 of the first dynamic input is the batch N.
Status declareInputs(Context& ctx, const onnx::GraphProto& graph, const std::map<std::string, bool>& isInit) {
  std::map<std::string, int> symbolOf;
  bool batchTaken = false;
  int anonymous = 0;
  for (const auto& in : graph.input()) {
    if (isInit.count(in.name())) continue;
    if (!in.type().has_tensor_type()) return unsupported("input '" + in.name() + "' is not a tensor");
    const auto& tt = in.type().tensor_type();
    auto dt = import::dtypeFromOnnx(tt.elem_type());
    if (!dt.isOk()) return dt.status().withContext("input '" + in.name() + "'");
    TensorType type{*dt, {}};
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      if (d.has_dim_value() && d.dim_value() > 0) {
        type.dims.push_back(d.dim_value());
        continue;
      }
      std::string param = d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?" + std::to_string(anonymous++);
      auto it = symbolOf.find(param);
      if (it == symbolOf.end()) {
        int sym = (!batchTaken && k == 0) ? kBatchSymbol : ctx.graph().addSymbol(param);
        batchTaken = batchTaken || sym == kBatchSymbol;
        it = symbolOf.emplace(param, sym).first;
      }
      type.dims.push_back(symDim(it->second));
    }
    ctx.setValue(in.name(), ctx.graph().addInput(in.name(), std::move(type)));
  }
  return Status::ok();
}

Status importNode(Context& ctx, const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return unsupported("unsupported op '" + node.domain() + "::" + node.op_type() + "'");
  }
  if (node.op_type() == "Loop") return import::importLoop(ctx, node);
  if (node.op_type() == "ConcatFromSequence") return import::importConcatFromSequence(ctx, node);
  import::Handler h = import::findHandler(node.op_type());
  if (h == nullptr) return unsupported("unsupported op '" + node.op_type() + "'");
  return h(ctx, node);
}

Status importOutputs(Context& ctx, const onnx::GraphProto& graph) {
  Graph& g = ctx.graph();
  for (const auto& out : graph.output()) {
    auto v = ctx.value(out.name());
    if (!v.isOk()) return v.status();
    ValueId id = *v;
    bool shared = g.value(id).producer < 0 ||
                  std::find(g.outputs().begin(), g.outputs().end(), id) != g.outputs().end();
    if (shared) {
      CAGR_ASSIGN_OR_RETURN(id, g.add(OpKind::kIdentity, {id}, {}, out.name()));
    }
    g.addOutput(id, out.name());
  }
  return Status::ok();
}

Status recognize(Graph& g, ImportReport& report) {
  CAGR_RETURN_IF_ERROR(import::recognizeInteraction(g, report));
  CAGR_RETURN_IF_ERROR(import::recognizeFM(g, report));
  CAGR_RETURN_IF_ERROR(import::recognizeCIN(g, report));
  CAGR_RETURN_IF_ERROR(import::pushSumsThroughConcats(g, report));
  g.eraseDeadNodes();
  g.compact();
  return Status::ok();
}

}  // namespace

StatusOr<Graph> importOnnx(const std::string& path, const ImportOptions& options, ImportReport* reportOut) {
  CAGR_ASSIGN_OR_RETURN(onnx::ModelProto model, loadModel(path));
  ImportReport report;
  report.opset = defaultOpset(model);
  report.producer = model.producer_name() + " " + model.producer_version();
  Graph g;
  Context ctx(g, report, path);
  const onnx::GraphProto& graph = model.graph();
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::map<std::string, bool> isInit;
  for (const auto& t : graph.initializer()) {
    auto tensor = import::tensorFromOnnx(t, dir);
    if (!tensor.isOk()) return tensor.status().withContext(path);
    ctx.setConstant(t.name(), std::move(tensor).value());
    isInit[t.name()] = true;
  }
  CAGR_RETURN_IF_ERROR(declareInputs(ctx, graph, isInit).withContext(path));
  for (const auto& node : graph.node()) {
    for (const auto& o : node.output()) ctx.setProducer(o, &node);
  }
  for (const auto& node : graph.node()) {
    ctx.setCurrent(&node);
    ctx.takeHitDeferred();
    Status s = importNode(ctx, node);
    if (!s.isOk()) {
      // Keep going: a node only shape arithmetic or a recognised pattern
      // needed may fail harmlessly; the error surfaces if its outputs are used.
      // An error inherited from an input keeps the node that caused it.
      Status why = ctx.takeHitDeferred() ? s : s.withContext(ctx.where());
      for (const auto& o : node.output()) {
        if (!ctx.known(o) || ctx.entry(o)->deferred.isOk()) ctx.setDeferred(o, why);
      }
    }
  }
  ctx.setCurrent(nullptr);
  CAGR_RETURN_IF_ERROR(importOutputs(ctx, graph));
  g.eraseDeadNodes();
  g.compact();
  if (options.recognizePatterns) CAGR_RETURN_IF_ERROR(recognize(g, report).withContext(path));
  CAGR_RETURN_IF_ERROR(g.verify().withContext(path + ": imported graph failed verification"));
  if (reportOut != nullptr) *reportOut = std::move(report);
  return g;
}

}  // namespace cagr
