// Recognises nn.EmbeddingBag as exported by torch.onnx: a Loop over bags whose
// body reduces the rows of table W for ids I[offsets[b] : offsets[b+1]].
//  * TorchScript exporter: scan output Reduce(Gather(W, Slice(I, s_b, e_b)), 0).
//  * dynamo exporter: SequenceInsert(If(s_b == e_b, zeros,
//    Reduce(Slice(Gather(W, I) * ones, s_b, e_b), 0))) + ConcatFromSequence.
// Either way the offsets are Concat(offsets, [len(I)]) — or, with
// include_last_offset (TorchScript, a fixed number of bags), the offsets
// themselves with the ends taken from offsets[1:]. Anything else is not an
// EmbeddingBag and the Loop is reported as unsupported.
#include <map>

#include "import/context.h"
#include "import/handlers.h"

namespace cagr::import {
namespace {

// Name -> producing node within one (sub)graph.
using Producers = std::map<std::string, const onnx::NodeProto*>;

Producers producersOf(const onnx::GraphProto& g) {
  Producers p;
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) p[o] = &n;
  }
  return p;
}

const onnx::NodeProto* producedBy(const Producers& p, const std::string& name, const char* opType) {
  auto it = p.find(name);
  if (it == p.end() || it->second->op_type() != opType) return nullptr;
  return it->second;
}

const onnx::GraphProto* subgraph(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = findAttr(n, name);
  return a != nullptr && a->has_g() ? &a->g() : nullptr;
}

struct BagMatch {
  std::string table, ids, offsetsConcat, mode;
  std::string bagEnds;        // TorchScript: what the slice end is picked from (offsets[1:] with include_last_offset)
  std::string sequenceInit;   // dynamo: the Loop input that carries the bag sequence
  int sequenceInitIndex = -1;  // its position among the body inputs
  bool keepdims = false;
};

const char* modeOf(const std::string& reduceOp) {
  if (reduceOp == "ReduceSum") return "sum";
  if (reduceOp == "ReduceMean") return "mean";
  if (reduceOp == "ReduceMax") return "max";
  return nullptr;
}

// Follows an outer-scope name through Reshape(x, [-1]) / Identity.
std::string throughReshape(Context& ctx, const std::string& name) {
  const onnx::NodeProto* p = ctx.producer(name);
  if (p != nullptr && (p->op_type() == "Reshape" || p->op_type() == "Identity")) return p->input(0);
  return name;
}

bool allOnes(const Tensor* t) {
  if (t == nullptr) return false;
  for (int64_t i = 0; i < t->numel(); ++i) {
    if (t->getF64(i) != 1.0) return false;
  }
  return true;
}

// The default per-sample weight column: Unsqueeze(Expand(1, [L])) with a
// dynamic id count, a folded constant of ones with a fixed one.
bool isDefaultWeight(Context& ctx, const std::string& name) {
  if (auto c = ctx.constant(name)) return allOnes(c.get());
  const onnx::NodeProto* w = ctx.producer(name);
  const onnx::NodeProto* expand = w != nullptr && w->op_type() == "Unsqueeze" ? ctx.producer(w->input(0)) : nullptr;
  return expand != nullptr && expand->op_type() == "Expand" && allOnes(ctx.constant(expand->input(0)).get());
}

// Dynamo's rows source: Gather(W, I) possibly times an all-ones weight column.
Status matchRowSource(Context& ctx, const std::string& rows, BagMatch& m) {
  const onnx::NodeProto* p = ctx.producer(rows);
  if (p != nullptr && p->op_type() == "Mul") {
    const onnx::NodeProto* gather = ctx.producer(p->input(0));
    if (gather == nullptr || gather->op_type() != "Gather") return unsupported("EmbeddingBag rows are not a Gather");
    // The other factor is the per-sample weight column; only the default (all ones) is supported.
    if (!isDefaultWeight(ctx, p->input(1))) return unsupported("EmbeddingBag with per_sample_weights from this exporter");
    p = gather;
  }
  if (p == nullptr || p->op_type() != "Gather") return unsupported("EmbeddingBag rows are not a Gather");
  m.table = p->input(0);
  m.ids = throughReshape(ctx, p->input(1));
  return Status::ok();
}

// The TorchScript form: body scan output = Reduce(Gather(W, Slice(I, s, e)), [0]).
Status matchScriptLoop(Context& ctx, const onnx::GraphProto& body, BagMatch& m) {
  if (body.output_size() != 2) return unsupported("Loop body is not a single scan over bags");
  Producers p = producersOf(body);
  auto it = p.find(body.output(1).name());
  if (it == p.end() || modeOf(it->second->op_type()) == nullptr) return unsupported("Loop body does not end in a reduction");
  const onnx::NodeProto* reduce = it->second;
  m.mode = modeOf(reduce->op_type());
  m.keepdims = attrInt(*reduce, "keepdims", 1) != 0;
  const onnx::NodeProto* gather = producedBy(p, reduce->input(0), "Gather");
  if (gather == nullptr) return unsupported("Loop body reduces something other than gathered rows");
  const onnx::NodeProto* slice = producedBy(p, gather->input(1), "Slice");
  if (slice == nullptr) return unsupported("Loop body gathers ids that are not a slice");
  m.table = gather->input(0);
  m.ids = slice->input(0);
  // Slice start: Unsqueeze(Gather(offsetsConcat, iter)).
  const onnx::NodeProto* unsq = producedBy(p, slice->input(1), "Unsqueeze");
  const onnx::NodeProto* pick = unsq != nullptr ? producedBy(p, unsq->input(0), "Gather") : nullptr;
  if (pick == nullptr) return unsupported("Loop body slice start is not offsets[iter]");
  m.offsetsConcat = pick->input(0);
  const onnx::NodeProto* endUnsq = producedBy(p, slice->input(2), "Unsqueeze");
  const onnx::NodeProto* endPick = endUnsq != nullptr ? producedBy(p, endUnsq->input(0), "Gather") : nullptr;
  if (endPick != nullptr) m.bagEnds = endPick->input(0);
  return Status::ok();
}

// The dynamo form: SequenceInsert(seq, If(start == end, zeros, Reduce(Slice(rows, start, end)))).
Status matchDynamoLoop(Context& ctx, const onnx::GraphProto& body, BagMatch& m) {
  if (body.output_size() != 3) return unsupported("Loop body is not a sequence-building loop");
  Producers p = producersOf(body);
  const onnx::NodeProto* insert = nullptr;
  for (const auto& out : body.output()) {
    if (insert == nullptr) insert = producedBy(p, out.name(), "SequenceInsert");
  }
  const onnx::NodeProto* cond = insert != nullptr ? producedBy(p, insert->input(1), "If") : nullptr;
  const onnx::GraphProto* elseBranch = cond != nullptr ? subgraph(*cond, "else_branch") : nullptr;
  if (elseBranch == nullptr || elseBranch->output_size() != 1) return unsupported("Loop body is not an EmbeddingBag bag loop");
  // Body inputs are (iter, cond, carried...); the carried sequence is SequenceInsert's input.
  for (int i = 2; i < body.input_size(); ++i) {
    if (body.input(i).name() == insert->input(0)) m.sequenceInitIndex = i;
  }
  Producers ep = producersOf(*elseBranch);
  auto it = ep.find(elseBranch->output(0).name());
  if (it == ep.end() || modeOf(it->second->op_type()) == nullptr) return unsupported("bag branch does not end in a reduction");
  const onnx::NodeProto* reduce = it->second;
  m.mode = modeOf(reduce->op_type());
  m.keepdims = attrInt(*reduce, "keepdims", 1) != 0;
  const onnx::NodeProto* slice = producedBy(ep, reduce->input(0), "Slice");
  if (slice == nullptr) return unsupported("bag branch reduces something other than a slice of rows");
  CAGR_RETURN_IF_ERROR(matchRowSource(ctx, slice->input(0), m));
  const onnx::NodeProto* start = producedBy(p, slice->input(1), "Slice");
  if (start == nullptr) return unsupported("bag slice start is not offsets[i]");
  m.offsetsConcat = start->input(0);
  return Status::ok();
}

// nn.EmbeddingBag(include_last_offset=True) through TorchScript: bag b is
// ids[offsets[b] : offsets[1:][b]], so the ends are Slice(offsets, 1, end).
bool endsAreTheOffsetsAfterTheFirst(Context& ctx, const BagMatch& m) {
  const onnx::NodeProto* tail = m.bagEnds.empty() ? nullptr : ctx.producer(m.bagEnds);
  if (tail == nullptr || tail->op_type() != "Slice" || tail->input_size() < 3 || tail->input(0) != m.offsetsConcat) {
    return false;
  }
  auto starts = ctx.ints(tail->input(1));
  auto ends = ctx.ints(tail->input(2));
  auto axes = tail->input_size() > 3 && !tail->input(3).empty() ? ctx.ints(tail->input(3)) : std::optional<SymInts>();
  auto steps = tail->input_size() > 4 && !tail->input(4).empty() ? ctx.ints(tail->input(4)) : std::optional<SymInts>();
  auto one = [](const std::optional<SymInts>& v, int64_t want) {
    return v && v->isStatic() && v->dims.size() == 1 && v->dims[0] == want;
  };
  auto type = ctx.typeOf(m.offsetsConcat);
  return one(starts, 1) && ends && ends->isStatic() && ends->dims.size() == 1 && (!axes || one(axes, 0)) &&
         (!steps || one(steps, 1)) && type.isOk() && type->rank() == 1 &&
         (isSymbolic(type->dims[0]) || ends->dims[0] >= type->dims[0]);
}

// offsetsConcat must be Concat(offsets, [len(ids)]) (or, with
// `lastOffset` set, the offsets themselves); returns the offsets name.
StatusOr<std::string> offsetsOf(Context& ctx, const BagMatch& m, bool& lastOffset) {
  const onnx::NodeProto* concat = ctx.producer(m.offsetsConcat);
  lastOffset = false;
  if ((concat == nullptr || concat->op_type() != "Concat") && endsAreTheOffsetsAfterTheFirst(ctx, m)) {
    CAGR_ASSIGN_OR_RETURN(TensorType offsets, ctx.typeOf(m.offsetsConcat));
    if (isSymbolic(offsets.dims[0])) {
      return unsupported("nn.EmbeddingBag(include_last_offset=True) with a dynamic batch: N + 1 offsets give N bags, "
                         "which CAGR's dims (a multiple of one symbol) cannot express; export it with a fixed batch");
    }
    lastOffset = true;
    return m.offsetsConcat;
  }
  if (auto folded = concat == nullptr ? ctx.constant(m.offsetsConcat) : nullptr) {
    // A fixed batch folds Concat(offsets, [len(ids)]) into one constant:
    // its last entry must be the (static) id count; the rest are the offsets.
    CAGR_ASSIGN_OR_RETURN(TensorType ids, ctx.typeOf(m.ids));
    const int64_t n = folded->numel();
    if (folded->rank() != 1 || n < 1 || ids.rank() != 1 || isSymbolic(ids.dims[0]) ||
        folded->getI64(n - 1) != ids.dims[0]) {
      return unsupported("bag boundaries do not end at the number of indices");
    }
    Tensor starts(DType::kI64, {n - 1});
    for (int64_t i = 0; i + 1 < n; ++i) starts.data<int64_t>()[i] = folded->getI64(i);
    const std::string name = m.offsetsConcat + "/bag_starts";
    ctx.setConstant(name, std::move(starts));
    return name;
  }
  if (concat == nullptr || concat->op_type() != "Concat" || concat->input_size() != 2) {
    return unsupported("bag boundaries are not Concat(offsets, [len(indices)])");
  }
  auto len = ctx.ints(concat->input(1));
  CAGR_ASSIGN_OR_RETURN(TensorType ids, ctx.typeOf(m.ids));
  if (!len || len->dims.size() != 1 || ids.rank() != 1 || len->dims[0] != ids.dims[0] ||
      len->isSym(0) != isSymbolic(ids.dims[0])) {
    return unsupported("bag boundaries do not end at the number of indices");
  }
  return concat->input(0);
}

StatusOr<ValueId> buildBag(Context& ctx, const BagMatch& m, const onnx::NodeProto& loop) {
  bool lastOffset = false;
  CAGR_ASSIGN_OR_RETURN(std::string offsets, offsetsOf(ctx, m, lastOffset));
  CAGR_ASSIGN_OR_RETURN(ValueId table, ctx.value(m.table));
  CAGR_ASSIGN_OR_RETURN(ValueId ids, ctx.value(m.ids));
  CAGR_ASSIGN_OR_RETURN(ValueId off, ctx.value(offsets));
  if (!ctx.graph().isConstant(table)) return unsupported("EmbeddingBag table is not a weight");
  Attrs a;
  a.set("mode", m.mode);
  if (lastOffset) a.set("include_last_offset", int64_t{1});
  CAGR_ASSIGN_OR_RETURN(ValueId bag, ctx.add1(OpKind::kEmbeddingBag, {table, ids, off}, a));
  ctx.report().recognized.push_back("EmbeddingBag(" + m.mode + ") from Loop '" + loop.name() + "'");
  return bag;
}

}  // namespace

Status importLoop(Context& ctx, const onnx::NodeProto& node) {
  const onnx::GraphProto* body = subgraph(node, "body");
  if (body == nullptr) return corrupt("Loop without a body");
  BagMatch m;
  bool dynamoForm = body->output_size() == 3;
  Status s = dynamoForm ? matchDynamoLoop(ctx, *body, m) : matchScriptLoop(ctx, *body, m);
  if (s.isOk() && dynamoForm) {
    // Body input i (i >= 2) is initialised from Loop input i.
    if (m.sequenceInitIndex < 0 || m.sequenceInitIndex >= node.input_size()) {
      s = unsupported("the bag sequence is not a loop-carried value");
    } else {
      m.sequenceInit = node.input(m.sequenceInitIndex);
    }
  }
  if (!s.isOk()) return unsupported("unsupported op 'Loop': only nn.EmbeddingBag loops are recognised (" + s.message() + ")");
  CAGR_ASSIGN_OR_RETURN(ValueId bag, buildBag(ctx, m, node));
  if (dynamoForm) {
    if (!m.keepdims) return unsupported("EmbeddingBag loop producing rank-1 bags");
    // Loop outputs follow the carried values after the condition: find the sequence.
    for (int i = 0; i < node.output_size(); ++i) {
      bool isSeq = i + 2 < node.input_size() && node.input(i + 2) == m.sequenceInit;
      if (isSeq) {
        ctx.setBagSequence(node.output(i), bag);
      } else {
        ctx.setDeferred(node.output(i), unsupported("Loop counter output"));
      }
    }
    return Status::ok();
  }
  if (m.keepdims) return unsupported("EmbeddingBag loop scanning rank-2 bags");
  return bindOutput(ctx, node, bag);
}

Status importConcatFromSequence(Context& ctx, const onnx::NodeProto& node) {
  const Entry* e = ctx.entry(node.input(0));
  if (e != nullptr && !e->deferred.isOk()) return ctx.value(node.input(0)).status();
  ValueId bag = ctx.bagSequenceValue(node.input(0));
  if (bag == kNoValue || attrInt(node, "axis", 0) != 0 || attrInt(node, "new_axis", 0) != 0) {
    return unsupported("unsupported op 'ConcatFromSequence' outside an EmbeddingBag loop");
  }
  return bindOutput(ctx, node, bag);
}

}  // namespace cagr::import
