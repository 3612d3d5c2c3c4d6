// The fused elementwise program behind the CPU eltwise and reduce steps: a
// group of elementwise ops and views compiled into slots (values) and
// instructions, evaluated tile by tile over one iteration space, so values
// inside the group live in L1-sized scratch tiles and only the group's
// outputs reach memory. Views share their input's storage. Values smaller
// than the iteration space (e.g. an [N,1] term broadcast into [N,C]) are
// materialised once per run before the tiled pass. Preconditions: members
// are elementwise ops (lower/op_sets.h kEltwise) or views, in graph order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/eltwise_kernels.h"
#include "backends/cpu/eltwise_strided.h"
#include "backends/cpu/step.h"

namespace cagr::cpu {

/// Where a step reads a value it does not compute: the engine's buffer, a
/// constant converted once to its storage precision (bf16 / f16 /
/// int8_rowwise), or a per-run rounded copy of a graph input that has a
/// storage decision — the values the reference executor reads.
class OperandSource {
 public:
  static StatusOr<OperandSource> make(const Graph& g, ValueId v);
  /// This run's data; `keep` receives a rounded copy when one is needed.
  StatusOr<const std::byte*> data(const RunContext& ctx, Tensor& keep) const;

 private:
  ValueId value_ = kNoValue;
  Precision roundTo_ = Precision::kF32;  // graph inputs with a storage decision
  std::shared_ptr<const Tensor> stored_;
};

/// kUnsupported unless every output of `n` can be stored as its plan says.
Status checkStorableOutputs(const Graph& g, const Node& n);
/// A parameter (any numeric dtype, NumPy-broadcast to `to`) read as doubles.
std::vector<double> broadcastToDoubles(const std::byte* data, DType dtype, const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& to);

class EltwiseProgram {
 public:
  /// Compiles `members`. `sinks` are the member outputs the run writes to
  /// engine buffers; `leaves` extra values the caller reads through the
  /// program (a reduction's operands). kUnsupported with the reason for ops
  /// or element types it does not run.
  static StatusOr<std::unique_ptr<EltwiseProgram>> build(const Graph& g, const std::vector<NodeId>& members,
                                                         const std::vector<ValueId>& sinks,
                                                         const std::vector<ValueId>& leaves = {});

  /// How an instruction reads one operand in a tile.
  struct Access {
    // kDirect: aligned with the output; kScalar: one element; kRow: a [C]
    // row repeated along the output ([N,C] op [C]), read in place;
    // kExpand: any other broadcast, copied into a scratch tile.
    enum Mode : uint8_t { kDirect, kScalar, kRow, kExpand } mode = kDirect;
    StridedLayout layout;  // kExpand: the operand broadcast to the instruction's shape
    int64_t row = 0;       // kRow: C
  };
  /// One run's state: shapes, storage and access plans.
  struct Frame {
    std::vector<std::vector<int64_t>> shape;   // per slot
    std::vector<std::byte*> home;              // per root slot: stored data, nullptr for tile-only values
    std::vector<char> full;                    // per instruction: runs in the tiled pass
    std::vector<std::vector<Access>> access;   // per instruction, per operand
    std::vector<std::vector<double>> bn;       // per BatchNorm instruction: mean, mul, bias
    std::vector<std::vector<uint64_t>> temps;  // materialised values
    std::vector<Tensor> kept;                  // rounded graph inputs
    int64_t total = 0;
  };
  /// Per-thread scratch tiles of one run.
  struct Scratch {
    std::vector<std::vector<uint64_t>> reg;     // per slot computed in the tiled pass
    std::vector<std::vector<uint64_t>> expand;  // per operand position: broadcast operands
  };

  /// Resolves this run's shapes, plans operand access and materialises the
  /// values smaller than the iteration space. The space is value `space`'s
  /// element count (kNoValue: the largest member output).
  StatusOr<std::unique_ptr<Frame>> prepare(const RunContext& ctx, ValueId space = kNoValue) const;
  Scratch makeScratch(const Frame& f) const;
  /// Evaluates the full-size instructions over elements [begin, end) of the
  /// iteration space; value `redirect`'s elements go to `dst` (element
  /// `begin` first) instead of a scratch tile.
  Status evalRange(const Frame& f, int64_t begin, int64_t end, Scratch& s, ValueId redirect = kNoValue,
                   std::byte* dst = nullptr) const;
  /// The whole group: prepare, then evalRange over the space on `ctx.threads()`.
  Status run(const RunContext& ctx) const;

  /// This run's shape of `v`, and its data when it is stored (a leaf, a
  /// sink or a materialised value; nullptr when it only lives in tiles).
  const std::vector<int64_t>& shapeOf(const Frame& f, ValueId v) const;
  const std::byte* dataOf(const Frame& f, ValueId v) const;
  int64_t spaceSize(const Frame& f) const;
  /// True when the tiled pass computes something (false: only views of leaves).
  bool computesInRange(const Frame& f) const;
  /// True when the program is one f32 Mul of two stored values read
  /// directly at `v`'s shape, computing `v` (tile-only, no rounding): a and
  /// b are then its operands' data (a reduction reads the product itself).
  bool productOfStored(const Frame& f, ValueId v, const float*& a, const float*& b) const;
  /// "add+relu": the mnemonics of the members, for kernel names.
  const std::string& opNames() const { return names_; }

 private:
  struct Slot {
    ValueId value = kNoValue;
    DType dtype = DType::kF32;
    std::vector<Dim> dims;
    Precision storage = Precision::kF32;
    int producer = -1;  // instruction computing it; -1 for leaves and views
    int aliasOf = -1;   // a view: the slot whose storage it shares
    bool sink = false;
    std::unique_ptr<OperandSource> source;  // leaves
  };
  struct Instr {
    EltOp op;
    int out = -1;
    std::vector<int> in;  // operand slots (BatchNorm: x, scale, bias, mean, var)
    double eps = 0;       // BatchNorm
    std::string where;    // "node 'n' (Add)" for errors
  };
  int slotOf(ValueId v) const;
  int rootOf(int slot) const;
  StatusOr<int> leafSlot(const Graph& g, ValueId v);
  Status addMember(const Graph& g, const Node& n, bool sink);
  Status addInstr(const Graph& g, const Node& n, std::vector<int> in, bool sink);
  Status bindShapes(const RunContext& ctx, Frame& f) const;
  Status placeSlots(const RunContext& ctx, Frame& f) const;
  void planAccess(Frame& f) const;
  void batchNormParams(const Frame& f, const Instr& ins, std::vector<double>& out) const;
  Status materialise(const RunContext& ctx, Frame& f) const;
  Status runInstr(const Frame& f, size_t i, int64_t t0, int64_t n, int64_t begin, Scratch& s, int redirect,
                  std::byte* dst) const;
  Status runRows(const Instr& ins, const std::vector<Access>& access, const TileIn* in, std::byte* y, int64_t t0,
                 int64_t n) const;
  std::byte* slotPtr(const Frame& f, int root, int64_t t0, int64_t begin, Scratch& s, int redirect,
                     std::byte* dst) const;

  std::vector<Slot> slots_;
  std::vector<Instr> instrs_;
  std::string names_;
};

}  // namespace cagr::cpu
