// The elementwise epilogue of a GEMM group as a small register program: the
// raw product is register 0, every instruction (one elementwise op over the
// product's flat index space) writes the next register, and operands from
// outside the group are read through a flat broadcast pattern. It runs over
// contiguous segments while they are in cache (own.gemm's finished blocks,
// or segments of a library GEMM's output); oneDNN runs a prefix of it as
// post-ops. Preconditions (checked by build): fp32 values, every member's
// output has the product's element count, BatchNorm parameters constant.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/eltwise_kernels.h"
#include "backends/cpu/gemm_problem.h"
#include "backends/cpu/step.h"

namespace cagr::cpu {

/// A constant's data as the reference reads it (its storage precision
/// applied once); kUnsupported unless it is f32.
StatusOr<std::shared_ptr<const Tensor>> storedConstant(const Graph& g, ValueId v);

/// Symbol values of one run (index = symbol; 0 unused).
using Symbols = std::vector<int64_t>;
/// Concrete dims of `t` under `s`.
std::vector<int64_t> resolveDims(const std::vector<Dim>& dims, const Symbols& s);

/// Where element i of a flat index space reads a broadcast operand: at
/// (i / q) % p. Full operands have q = 1, p = size; scalars p = 1; a
/// per-column vector q = 1, p = N; a per-row one q = N, p = M.
struct FlatPattern {
  int64_t q = 1, p = 1;
  bool operator==(const FlatPattern&) const = default;
};
/// The pattern of `operand` broadcast (NumPy rules, or along axis 1 when
/// `onChannels`) into `out`; false when its kept dims are not contiguous.
bool flatPattern(const std::vector<int64_t>& operand, const std::vector<int64_t>& out, bool onChannels,
                 FlatPattern& pat);

/// A value the epilogue reads from outside the group.
struct EpiInput {
  ValueId value = kNoValue;             // the graph value (kNoValue for folded parameters)
  TensorType type;                      // its shape as read here (a view of a value takes the view's)
  std::shared_ptr<const Tensor> fixed;  // compile-time data (constants, folded BatchNorm), else null
  std::vector<Dim> space;               // the dims it broadcasts into
  bool onChannels = false;              // [C] along axis 1 of `space` (Conv1x1 bias, BatchNorm)
};

/// An operand: a register, an input, or an immediate.
struct EpiSrc {
  enum Kind : uint8_t { kNone, kReg, kInput, kImm } kind = kNone;
  int index = 0;  // register or input index
  float imm = 0.0f;
};

/// One elementwise op of the program (the eltwise steps' tile kernels run it).
struct EpiInstr {
  EltOp op;        // the op and its attributes
  EpiSrc a, b;     // b for binary ops
  int bn = -1;     // BatchNorm: index of its folded parameters
  int member = 0;  // index of the group member it belongs to (0: the anchor)
};

/// An inference BatchNorm's per-channel vectors, folded once.
struct EpiBatchNorm {
  std::vector<double> mean, mul, bias;  // y = (x - mean) * mul + bias
  std::vector<Dim> dims;                // its output: channels on axis 1
};

/// Buffers and patterns of one run.
struct EpiBinding {
  int64_t numel = 0;
  std::vector<const float*> input;             // per input
  std::vector<FlatPattern> pattern;            // per input
  std::vector<float*> primary;                 // per register: the output buffer it is written to, or null
  std::vector<std::pair<int, float*>> copies;  // further outputs holding a register
  std::vector<Tensor> expanded;                // inputs broadcast in full where no pattern fits
  std::vector<int64_t> bnInner;                // per BatchNorm: elements per channel and sample
};

class Epilogue {
 public:
  /// The program of the anchor's own scaling / bias, then `members` (graph
  /// order, anchor first), storing `outputs`; kUnsupported when a member
  /// cannot run in it.
  static StatusOr<Epilogue> build(const Graph& g, const GemmAnchor& anchor, const std::vector<NodeId>& members,
                                  const std::vector<ValueId>& outputs);

  const std::vector<EpiInstr>& instrs() const { return instrs_; }
  const std::vector<EpiInput>& inputs() const { return inputs_; }
  int numRegs() const { return static_cast<int>(instrs_.size()) + 1; }
  /// True when register r is stored to an output.
  bool isOutput(int r) const;
  /// True when an instruction after `after` reads register r.
  bool readLater(int r, int after) const;
  /// Mnemonics of the members whose last instruction lies in [from, to).
  std::vector<std::string> memberNames(int from, int to) const;
  /// Values read from outside (for binding symbols), with declared types.
  const std::vector<std::pair<ValueId, TensorType>>& reads() const { return reads_; }

  /// Patterns of the inputs under `s` (false entries: no pattern fits).
  std::vector<FlatPattern> patterns(const Symbols& s, std::vector<char>* fits = nullptr) const;
  /// Buffers of one run; `numel` is the product's element count.
  StatusOr<EpiBinding> bind(const RunContext& ctx, const Symbols& s, int64_t numel) const;

  /// Where an engine writes register `base`: its output buffer, or the one
  /// of the last register stored (then `copyBase` says whether register
  /// `base` must be saved before that buffer is overwritten); null if none.
  float* target(const EpiBinding& b, int base, bool& copyBase) const;
  /// Runs instructions [base, end) over flat elements [i0, i0 + len), with
  /// register `base` in `dst` (the target) at i0. Thread-safe.
  void runSegment(const EpiBinding& b, int base, bool copyBase, float* dst, int64_t i0, int64_t len) const;
  /// runSegment over all elements into target(b, base) (OpenMP over
  /// segments); a no-op when nothing is left to do.
  void runAll(const EpiBinding& b, int base) const;

 private:
  Status addAnchor(const Graph& g, const GemmAnchor& a);
  Status addMember(const Graph& g, NodeId id, int member);
  Status addBatchNorm(const Graph& g, const Node& n, int member);
  StatusOr<EpiSrc> operand(const Graph& g, ValueId v, const std::vector<Dim>& space, bool onChannels = false,
                           std::shared_ptr<const Tensor> fixed = nullptr);
  int push(EpiInstr in);
  int regFor(ValueId v) const;

  std::vector<EpiInstr> instrs_;
  std::vector<EpiInput> inputs_;
  std::vector<EpiBatchNorm> batchNorms_;
  std::vector<std::pair<ValueId, int>> regOf_;        // member values (and views of them) -> register
  std::vector<std::pair<ValueId, ValueId>> aliases_;  // views of outside values -> the viewed value
  std::vector<std::pair<ValueId, int>> outputs_;      // output value -> register
  std::vector<std::pair<ValueId, TensorType>> reads_;
  std::vector<std::string> memberOps_;  // index = member
  std::vector<Dim> anchorDims_;
};

}  // namespace cagr::cpu
