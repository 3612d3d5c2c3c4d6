// importOnnx: parse the protobuf, declare inputs with symbolic dims, import
// node by node (handlers in onnx_ops.cc / shape_ops.cc / embedding_bag_loop.cc),
// then clean up and recognise rec-model subgraphs.
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "import/context.h"
#include "support/files.h"

namespace cagr {
namespace {

using import::Context;

StatusOr<onnx::ModelProto> loadModel(const std::string& path) {
  CAGR_RETURN_IF_ERROR(checkRegularFile(path, "ONNX model"));
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

bool isDynamic(const onnx::TensorShapeProto::Dimension& d) { return !(d.has_dim_value() && d.dim_value() > 0); }

// The input whose dim 0 is the batch N: the first float input with a dynamic
// dim 0 (ids and offsets count bags and ids, dense features count samples),
// else the first input with one; -1 if none.
int batchInput(const onnx::GraphProto& graph, const std::map<std::string, bool>& isInit) {
  int fallback = -1;
  for (int i = 0; i < graph.input_size(); ++i) {
    const auto& in = graph.input(i);
    if (isInit.count(in.name()) || !in.type().has_tensor_type()) continue;
    const auto& tt = in.type().tensor_type();
    if (tt.shape().dim_size() == 0 || !isDynamic(tt.shape().dim(0))) continue;
    if (tt.elem_type() == onnx::TensorProto::FLOAT) return i;
    if (fallback < 0) fallback = i;
  }
  return fallback;
}

// A new symbol for one dynamic axis; past the symbol table's capacity, the
// symbol of an axis with the same dim_param name.
StatusOr<int> axisSymbol(Graph& g, const std::string& param) {
  if (g.symbols().size() < static_cast<size_t>(kSymStride)) return g.addSymbol(param);
  auto it = std::find(g.symbols().begin() + 1 + kBatchSymbol, g.symbols().end(), param);
  if (it != g.symbols().end()) return static_cast<int>(it - g.symbols().begin());
  return unsupported("more than " + std::to_string(kSymStride - 1) + " differently named dynamic dimensions");
}

// Declares the graph inputs. Every dynamic axis gets its own symbol, whatever
// its dim_param says (exporters name unrelated axes alike); the ops that need
// two of them equal unify them during import (Graph::sameDim).
Status declareInputs(Context& ctx, const onnx::GraphProto& graph, const std::map<std::string, bool>& isInit) {
  int batch = batchInput(graph, isInit);
  int anonymous = 0;
  for (int i = 0; i < graph.input_size(); ++i) {
    const auto& in = graph.input(i);
    if (isInit.count(in.name())) continue;
    if (!in.type().has_tensor_type()) return unsupported("input '" + in.name() + "' is not a tensor");
    const auto& tt = in.type().tensor_type();
    auto dt = import::dtypeFromOnnx(tt.elem_type());
    if (!dt.isOk()) return dt.status().withContext("input '" + in.name() + "'");
    TensorType type{*dt, {}};
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      if (!isDynamic(d)) {
        type.dims.push_back(d.dim_value());
        continue;
      }
      std::string param = d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "S" + std::to_string(anonymous++);
      if (i == batch && k == 0) {
        type.dims.push_back(kBatch);
        continue;
      }
      auto sym = axisSymbol(ctx.graph(), param);
      if (!sym.isOk()) return sym.status().withContext("input '" + in.name() + "'");
      type.dims.push_back(symDim(*sym));
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

// The ONNX nodes the graph outputs depend on (through inputs; a subgraph's
// outer-scope reads are not followed: enough to tell live failures from dead ones).
std::set<std::string> liveNodes(const Context& ctx, const onnx::GraphProto& graph) {
  std::set<std::string> live;
  std::vector<std::string> work;
  for (const auto& out : graph.output()) work.push_back(out.name());
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    const onnx::NodeProto* p = ctx.producer(v);
    if (p == nullptr) continue;
    live.insert(p->name() + "\n" + p->op_type());
    for (const auto& in : p->input()) work.push_back(in);
  }
  return live;
}

// Every live node whose op has no importer, grouped by op: "TopK (node 'a'), Loop (nodes 'b', 'c')".
std::string unsupportedOpsSummary(const Context& ctx, const onnx::GraphProto& graph) {
  std::set<std::string> live = liveNodes(ctx, graph);
  std::map<std::string, std::vector<std::string>> byOp;
  for (const auto& f : ctx.failures()) {
    bool opMissing = f.message.find("unsupported op '") != std::string::npos;
    if (opMissing && live.count(f.node + "\n" + f.op)) byOp[f.op].push_back(f.node);
  }
  std::string s;
  for (const auto& [op, nodes] : byOp) {
    s += (s.empty() ? "" : ", ") + op + (nodes.size() > 1 ? " (nodes " : " (node ");
    for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", '" : "'") + nodes[i] + "'";
    s += ")";
  }
  return s;
}

Status importOutputs(Context& ctx, const onnx::GraphProto& graph) {
  Graph& g = ctx.graph();
  for (const auto& out : graph.output()) {
    auto v = ctx.value(out.name());
    if (!v.isOk()) {
      std::string ops = unsupportedOpsSummary(ctx, graph);
      if (ops.empty()) return v.status();
      return unsupported(v.status().message() + " [every unsupported op this model needs: " + ops + "]");
    }
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

// ONNX graphs are SSA: every name is defined once (an initializer may also
// be listed as an input) and every output named once.
Status checkUniqueNames(const onnx::GraphProto& graph) {
  std::set<std::string> defined, inits;
  for (const auto& t : graph.initializer()) {
    if (!inits.insert(t.name()).second) return corrupt("initializer '" + t.name() + "' is defined twice");
  }
  for (const auto& in : graph.input()) {
    if (!defined.insert(in.name()).second) return corrupt("input '" + in.name() + "' is declared twice");
  }
  defined.insert(inits.begin(), inits.end());
  for (const auto& n : graph.node()) {
    for (const auto& o : n.output()) {
      if (!o.empty() && !defined.insert(o).second) {
        return corrupt("node '" + n.name() + "' (" + n.op_type() + ") defines '" + o + "', which is already defined");
      }
    }
  }
  std::set<std::string> outs;
  for (const auto& o : graph.output()) {
    if (!outs.insert(o.name()).second) return corrupt("graph output '" + o.name() + "' is listed twice");
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

void import::importGraphNodes(Context& ctx, const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    for (const auto& o : node.output()) ctx.setProducer(o, &node);
  }
  for (const auto& node : graph.node()) {
    ctx.setCurrent(&node);
    ctx.takeHitDeferred();
    Status s = importNode(ctx, node);
    if (s.isOk()) continue;
    // Keep going: a node only shape arithmetic or a recognised pattern
    // needed may fail harmlessly; the error surfaces if its outputs are used.
    // An error inherited from an input keeps the node that caused it.
    bool inherited = ctx.takeHitDeferred();
    if (!inherited) ctx.recordFailure(node, s.message());
    Status why = inherited ? s : s.withContext(ctx.where());
    for (const auto& o : node.output()) {
      if (!ctx.known(o) || ctx.entry(o)->deferred.isOk()) ctx.setDeferred(o, why);
    }
  }
}

StatusOr<Graph> importOnnx(const std::string& path, const ImportOptions& options, ImportReport* reportOut) {
  CAGR_ASSIGN_OR_RETURN(onnx::ModelProto model, loadModel(path));
  ImportReport report;
  report.opset = defaultOpset(model);
  report.producer = model.producer_name() + " " + model.producer_version();
  Graph g;
  Context ctx(g, report, path);
  const onnx::GraphProto& graph = model.graph();
  std::string dir = std::filesystem::path(path).parent_path().string();
  CAGR_RETURN_IF_ERROR(checkUniqueNames(graph).withContext(path));
  std::map<std::string, bool> isInit;
  for (const auto& t : graph.initializer()) {
    auto tensor = import::tensorFromOnnx(t, dir);
    if (!tensor.isOk()) return tensor.status().withContext(path);
    ctx.setConstant(t.name(), std::move(tensor).value());
    isInit[t.name()] = true;
  }
  CAGR_RETURN_IF_ERROR(declareInputs(ctx, graph, isInit).withContext(path));
  g.setUnifySymbols(true);
  import::importGraphNodes(ctx, graph);
  ctx.setCurrent(nullptr);
  CAGR_RETURN_IF_ERROR(importOutputs(ctx, graph));
  g.eraseDeadNodes();
  g.compact();
  g.canonicalizeSymbols();
  if (options.recognizePatterns) CAGR_RETURN_IF_ERROR(recognize(g, report).withContext(path));
  CAGR_RETURN_IF_ERROR(g.verify().withContext(path + ": imported graph failed verification"));
  import::summarizeGenericRegions(g, report);
  if (reportOut != nullptr) *reportOut = std::move(report);
  return g;
}

}  // namespace cagr
