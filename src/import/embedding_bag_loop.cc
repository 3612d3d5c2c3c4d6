// Recognises nn.EmbeddingBag as exported by torch.onnx: a Loop over bags whose
// body reduces the rows of table W for ids I[offsets[b] : offsets[b+1]].
//  * TorchScript exporter: scan output Reduce(Gather(W, Slice(I, s_b, e_b)), 0),
//    the gathered rows times Unsqueeze(Slice(per_sample_weights, s_b, e_b)) when given.
//  * dynamo exporter: SequenceInsert(If(s_b == e_b, zeros, <bag>)) +
//    ConcatFromSequence, where <bag> is Reduce(Slice(Gather(W, I) * w, s_b, e_b), 0)
//    (w: ones or per_sample_weights), possibly behind nested Ifs that treat the
//    last bag apart or divide a sum by the bag size — accepted when every branch
//    pools the same bag the same way.
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
  std::string weights;        // per_sample_weights (sum mode), empty when none
  std::string bagEnds;        // TorchScript: what the slice end is picked from (offsets[1:] with include_last_offset)
  std::string sequenceInit;   // dynamo: the Loop input that carries the bag sequence
  int sequenceInitIndex = -1;  // its position among the body inputs
  std::string bagCount;       // dynamo: the outer value the loop counter runs up to
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
    // The other factor is the per-sample weight column: all ones by default,
    // else Unsqueeze(per_sample_weights, [1]).
    if (!isDefaultWeight(ctx, p->input(1))) {
      const onnx::NodeProto* col = ctx.producer(p->input(1));
      auto axes = col != nullptr && col->op_type() == "Unsqueeze" && col->input_size() == 2 ? ctx.ints(col->input(1))
                                                                                            : std::nullopt;
      if (!axes || !axes->isStatic() || axes->dims.size() != 1 || axes->dims[0] != 1) {
        return unsupported("EmbeddingBag rows are scaled by something other than per_sample_weights");
      }
      m.weights = throughReshape(ctx, col->input(0));
    }
    p = gather;
  }
  if (p == nullptr || p->op_type() != "Gather") return unsupported("EmbeddingBag rows are not a Gather");
  m.table = p->input(0);
  m.ids = throughReshape(ctx, p->input(1));
  return Status::ok();
}

// Integer values of `name`: a Constant node of the loop body, or an outer constant.
std::vector<int64_t> bodyInts(Context& ctx, const Producers& p, const std::string& name) {
  std::vector<int64_t> v;
  std::shared_ptr<const Tensor> t;
  if (const onnx::NodeProto* c = producedBy(p, name, "Constant")) {
    const auto* a = findAttr(*c, "value");
    auto parsed = a != nullptr && a->has_t() ? tensorFromOnnx(a->t(), "") : StatusOr<Tensor>(corrupt(""));
    if (parsed.isOk()) t = std::make_shared<const Tensor>(std::move(parsed).value());
  } else if (p.count(name) == 0) {
    t = ctx.constant(name);
  }
  for (int64_t i = 0; t != nullptr && i < t->numel(); ++i) v.push_back(t->getI64(i));
  return v;
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
  const onnx::NodeProto* weightCol = nullptr;
  if (const onnx::NodeProto* mul = producedBy(p, reduce->input(0), "Mul")) {
    // per_sample_weights: Mul(Gather(W, Slice(I, s, e)), Unsqueeze(Slice(PW, s, e), [1])).
    gather = producedBy(p, mul->input(0), "Gather");
    weightCol = producedBy(p, mul->input(1), "Unsqueeze");
  }
  if (gather == nullptr) return unsupported("Loop body reduces something other than gathered rows");
  const onnx::NodeProto* slice = producedBy(p, gather->input(1), "Slice");
  if (slice == nullptr) return unsupported("Loop body gathers ids that are not a slice");
  if (weightCol != nullptr) {
    const onnx::NodeProto* wslice = producedBy(p, weightCol->input(0), "Slice");
    bool sameBag = wslice != nullptr && wslice->input_size() >= 3 && slice->input_size() >= 3 &&
                   wslice->input(1) == slice->input(1) && wslice->input(2) == slice->input(2);
    if (!sameBag || weightCol->input_size() != 2 || bodyInts(ctx, p, weightCol->input(1)) != std::vector<int64_t>{1}) {
      return unsupported("Loop body scales the bag's rows by something other than its per_sample_weights");
    }
    m.weights = wslice->input(0);
  }
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

// Producers of the scopes a dynamo bag branch sees, innermost last: the loop
// body, the bag branch, then any nested If branches.
class Scopes {
 public:
  void push(const onnx::GraphProto& g) { maps_.push_back(producersOf(g)); }
  void pop() { maps_.pop_back(); }
  const onnx::NodeProto* node(const std::string& name, const char* opType = nullptr) const {
    for (auto it = maps_.rbegin(); it != maps_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return opType == nullptr || f->second->op_type() == opType ? f->second : nullptr;
    }
    return nullptr;
  }

 private:
  std::vector<Producers> maps_;
};

// What one bag's value is: `mode` pooling of rows[start : end] (keepdims).
struct BagValue {
  std::string mode, rows, start;
  bool keepdims = false;
  bool operator==(const BagValue& o) const {
    return mode == o.mode && rows == o.rows && start == o.start && keepdims == o.keepdims;
  }
};

// `name` is Slice(rows, start, end) — or an If whose branches both are such
// slices of the same rows from the same start (the last bag ends at the id
// count instead of at offsets[i + 1]). Returns the Slice (of one branch).
StatusOr<const onnx::NodeProto*> bagSlice(const Scopes& outer, const std::string& name, int depth) {
  const onnx::NodeProto* n = outer.node(name);
  if (n != nullptr && n->op_type() == "If" && depth < 4) {
    const onnx::GraphProto* th = subgraph(*n, "then_branch");
    const onnx::GraphProto* el = subgraph(*n, "else_branch");
    if (th == nullptr || el == nullptr || th->output_size() != 1 || el->output_size() != 1) {
      return unsupported("bag branch has an If without one output per branch");
    }
    Scopes s = outer;
    s.push(*th);
    CAGR_ASSIGN_OR_RETURN(const onnx::NodeProto* a, bagSlice(s, th->output(0).name(), depth + 1));
    s.pop();
    s.push(*el);
    CAGR_ASSIGN_OR_RETURN(const onnx::NodeProto* b, bagSlice(s, el->output(0).name(), depth + 1));
    if (a->input(0) != b->input(0) || a->input(1) != b->input(1)) {
      return unsupported("the branches of bag If '" + n->name() + "' slice different rows");
    }
    return a;
  }
  if (n == nullptr || n->op_type() != "Slice" || n->input_size() < 3 || n->input_size() > 4) {
    return unsupported("bag branch reduces something other than a slice of rows");
  }
  if (outer.node(n->input(1), "Slice") == nullptr) return unsupported("bag slice start is not offsets[i]");
  const onnx::NodeProto* end = outer.node(n->input(2));
  if (end != nullptr && end->op_type() != "Slice") return unsupported("bag slice end is not offsets[i + 1]");
  return n;
}

// Reduce(Slice(rows, start, end), [0]): the slice must start at this bag's
// start; its end is this bag's end or (for the last bag) the id count.
StatusOr<BagValue> reducedSlice(const Scopes& s, const onnx::NodeProto& reduce) {
  CAGR_ASSIGN_OR_RETURN(const onnx::NodeProto* slice, bagSlice(s, reduce.input(0), 0));
  return BagValue{modeOf(reduce.op_type()), slice->input(0), slice->input(1), attrInt(reduce, "keepdims", 1) != 0};
}

StatusOr<BagValue> bagValueOf(const Scopes& s, const std::string& name, int depth);

// ReduceSum(slice) / Cast(count) with count = (end or id count) - start: a mean.
StatusOr<BagValue> meanByDivision(const Scopes& s, const onnx::NodeProto& div, int depth) {
  CAGR_ASSIGN_OR_RETURN(BagValue sum, bagValueOf(s, div.input(0), depth + 1));
  const onnx::NodeProto* cast = s.node(div.input(1), "Cast");
  const onnx::NodeProto* count = cast != nullptr ? s.node(cast->input(0), "Sub") : nullptr;
  if (sum.mode != "sum" || count == nullptr || count->input(1) != sum.start) {
    return unsupported("bag branch divides by something other than the bag size");
  }
  sum.mode = "mean";
  return sum;
}

// If(cond, a, b) where both branches pool the same bag: the same value. A
// mean guarded by `count > 0` whose other branch is the (empty) sum is a mean.
StatusOr<BagValue> bagValueOfIf(const Scopes& outer, const onnx::NodeProto& n, int depth) {
  const onnx::GraphProto* th = subgraph(n, "then_branch");
  const onnx::GraphProto* el = subgraph(n, "else_branch");
  if (th == nullptr || el == nullptr || th->output_size() != 1 || el->output_size() != 1) {
    return unsupported("bag branch has an If without one output per branch");
  }
  Scopes s = outer;
  s.push(*th);
  StatusOr<BagValue> a = bagValueOf(s, th->output(0).name(), depth + 1);
  s.pop();
  s.push(*el);
  StatusOr<BagValue> b = bagValueOf(s, el->output(0).name(), depth + 1);
  if (!a.isOk() || !b.isOk()) return a.isOk() ? b : a;
  if (*a == *b) return a;
  const onnx::NodeProto* guard = outer.node(n.input(0), "Greater");
  BagValue sumForm = *b;
  sumForm.mode = "mean";
  if (a->mode == "mean" && b->mode == "sum" && sumForm == *a && guard != nullptr) return a;
  return unsupported("the branches of bag If '" + n.name() + "' pool differently");
}

StatusOr<BagValue> bagValueOf(const Scopes& s, const std::string& name, int depth) {
  if (depth > 8) return unsupported("bag branch nests too deeply");
  const onnx::NodeProto* n = s.node(name);
  if (n == nullptr) return unsupported("bag branch does not end in a reduction");
  const std::string& op = n->op_type();
  if (modeOf(op) != nullptr) return reducedSlice(s, *n);
  if (op == "Identity") return bagValueOf(s, n->input(0), depth + 1);
  if (op == "Div") return meanByDivision(s, *n, depth);
  if (op == "If") return bagValueOfIf(s, *n, depth);
  return unsupported("bag branch does not end in a reduction");
}

// The dynamo form: SequenceInsert(seq, If(start == end, zeros, <bag value>)).
Status matchDynamoLoop(Context& ctx, const onnx::GraphProto& body, BagMatch& m) {
  if (body.output_size() != 3) return unsupported("Loop body is not a sequence-building loop");
  Scopes scopes;
  scopes.push(body);
  const onnx::NodeProto* insert = nullptr;
  for (const auto& out : body.output()) {
    if (insert == nullptr) insert = scopes.node(out.name(), "SequenceInsert");
  }
  const onnx::NodeProto* cond = insert != nullptr ? scopes.node(insert->input(1), "If") : nullptr;
  const onnx::GraphProto* elseBranch = cond != nullptr ? subgraph(*cond, "else_branch") : nullptr;
  if (elseBranch == nullptr || elseBranch->output_size() != 1) return unsupported("Loop body is not an EmbeddingBag bag loop");
  // Body inputs are (iter, cond, carried...); the carried sequence is SequenceInsert's input.
  for (int i = 2; i < body.input_size(); ++i) {
    if (body.input(i).name() == insert->input(0)) m.sequenceInitIndex = i;
  }
  // The loop runs while Less(counter + 1, bag count).
  for (const auto& out : body.output()) {
    const onnx::NodeProto* less = scopes.node(out.name(), "Less");
    if (less != nullptr && m.bagCount.empty()) m.bagCount = less->input(1);
  }
  scopes.push(*elseBranch);
  CAGR_ASSIGN_OR_RETURN(BagValue bag, bagValueOf(scopes, elseBranch->output(0).name(), 0));
  m.mode = bag.mode;
  m.keepdims = bag.keepdims;
  CAGR_RETURN_IF_ERROR(matchRowSource(ctx, bag.rows, m));
  const onnx::NodeProto* start = scopes.node(bag.start, "Slice");
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

// Follows Identity producers back to the value they copy.
std::string throughIdentity(Context& ctx, std::string name) {
  for (const onnx::NodeProto* p = ctx.producer(name); p != nullptr && p->op_type() == "Identity"; p = ctx.producer(name)) {
    name = p->input(0);
  }
  return name;
}

// nn.EmbeddingBag(include_last_offset=True) through dynamo: the boundaries are
// the offsets themselves and the loop runs over Size(offsets) - 1 bags.
bool dynamoLastOffset(Context& ctx, const BagMatch& m) {
  if (m.bagCount.empty()) return false;
  const std::string offsets = throughIdentity(ctx, m.offsetsConcat);
  if (auto count = ctx.constant(throughIdentity(ctx, m.bagCount))) {
    // A fixed batch: the count is folded; it must be one less than the offsets.
    auto type = ctx.typeOf(offsets);
    return count->numel() == 1 && type.isOk() && type->rank() == 1 && !isSymbolic(type->dims[0]) &&
           count->getI64(0) + 1 == type->dims[0];
  }
  const onnx::NodeProto* sub = ctx.producer(throughIdentity(ctx, m.bagCount));
  auto one = sub != nullptr && sub->op_type() == "Sub" ? ctx.ints(sub->input(1)) : std::nullopt;
  const onnx::NodeProto* size = sub != nullptr ? ctx.producer(throughIdentity(ctx, sub->input(0))) : nullptr;
  return one && one->isStatic() && one->dims.size() == 1 && one->dims[0] == 1 && size != nullptr && size->op_type() == "Size" &&
         throughIdentity(ctx, size->input(0)) == offsets;
}

// offsetsConcat must be Concat(offsets, [len(ids)]) (or, with
// `lastOffset` set, the offsets themselves); returns the offsets name.
StatusOr<std::string> offsetsOf(Context& ctx, const BagMatch& m, bool& lastOffset) {
  const onnx::NodeProto* concat = ctx.producer(m.offsetsConcat);
  lastOffset = false;
  if ((concat == nullptr || concat->op_type() != "Concat") &&
      (endsAreTheOffsetsAfterTheFirst(ctx, m) || dynamoLastOffset(ctx, m))) {
    const std::string name = throughIdentity(ctx, m.offsetsConcat);
    CAGR_ASSIGN_OR_RETURN(TensorType offsets, ctx.typeOf(name));
    if (isSymbolic(offsets.dims[0])) {
      return unsupported("nn.EmbeddingBag(include_last_offset=True) with a dynamic batch: N + 1 offsets give N bags, "
                         "which CAGR's dims (a multiple of one symbol) cannot express; export it with a fixed batch");
    }
    lastOffset = true;
    return name;
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
  std::vector<ValueId> operands = {table, ids, off};
  if (!m.weights.empty()) {
    if (m.mode != "sum") return unsupported("per_sample_weights with mode " + m.mode + " (PyTorch allows sum only)");
    CAGR_ASSIGN_OR_RETURN(ValueId w, ctx.value(m.weights));
    operands.push_back(w);
  }
  Attrs a;
  a.set("mode", m.mode);
  if (lastOffset) a.set("include_last_offset", int64_t{1});
  CAGR_ASSIGN_OR_RETURN(ValueId bag, ctx.add1(OpKind::kEmbeddingBag, std::move(operands), a));
  ctx.report().recognized.push_back("EmbeddingBag(" + m.mode + (m.weights.empty() ? "" : ", per_sample_weights") +
                                    ") from Loop '" + loop.name() + "'");
  return bag;
}

// The dynamo form of padding_idx: the bag loop holds a Loop over the bag's
// ids that keeps those where Not(Equal(id, padding_idx)).
bool filtersPaddingIds(const onnx::GraphProto& body) {
  for (const auto& n : body.node()) {
    const onnx::GraphProto* inner = n.op_type() == "Loop" ? subgraph(n, "body") : nullptr;
    if (inner == nullptr) continue;
    Producers p = producersOf(*inner);
    for (const auto& m : inner->node()) {
      if (m.op_type() == "Not" && producedBy(p, m.input(0), "Equal") != nullptr) return true;
    }
  }
  return false;
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
  if (!s.isOk() && filtersPaddingIds(*body)) {
    return unsupported("nn.EmbeddingBag(padding_idx=...) as the dynamo exporter writes it (a per-id filtering Loop inside "
                       "the bag Loop) is not supported; pass padding ids as per_sample_weights of 0 (mode sum) instead");
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
