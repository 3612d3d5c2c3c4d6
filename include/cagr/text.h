// HIR text form: valid generic-syntax MLIR in a `cagr` namespace. CAGR prints
// and parses it itself; `mlir-opt-15 --allow-unregistered-dialect` accepts it,
// and what mlir-opt prints back parses to the same graph. For example
// (test/ir/golden/text_rec_model.mlir has a whole model):
//
//   "builtin.module"() ({
//     "cagr.graph"() ({
//     ^bb0(%arg0: tensor<?x13xf32>, %arg1: tensor<?x3xi64>, %arg2: tensor<?x3xf32>):
//       %0 = "cagr.constant"() {name = "fc1.weight", value = dense<"0x3F1A...">
//                                                      : tensor<8x13xf32>}
//            : () -> tensor<8x13xf32>
//       %1 = "cagr.constant"() {name = "fc1.bias", value = dense<0.0> : tensor<8xf32>} : () -> tensor<8xf32>
//       %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64}
//            : (tensor<?x13xf32>, tensor<8x13xf32>, tensor<8xf32>) -> tensor<?x8xf32>
//       %3 = "cagr.clip"(%2) {name = "relu", min = 0.0 : f64, max = 0x7FF0000000000000 : f64}
//            : (tensor<?x8xf32>) -> tensor<?x8xf32>
//       %4 = "cagr.constant"() {elided, name = "emb1"} : () -> tensor<50x8xf32>
//       %5 = "cagr.embedding_bag"(%4, %arg1, %arg2) {name = "bag", operand_mask = [1, 1, 0, 1]}
//            : (tensor<50x8xf32>, tensor<?x3xi64>, tensor<?x3xf32>) -> tensor<?x8xf32>
//       %6:2 = "cagr.split"(%3) {name = "heads", axis = 1 : i64, split = [2, 6]}
//            : (tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x6xf32>)
//       "cagr.return"(%6#0, %5) : (tensor<?x2xf32>, tensor<?x8xf32>) -> ()
//     }) {sym_name = "main", input_names = ["dense", "ids", "w"], input_dims = ["N,13", "N,3", "N,3"],
//         output_names = ["y", "e"], symbols = ["N"]} : () -> ()
//   }) : () -> ()
//
// (CAGR prints each op on one line; the breaks above are for this comment.)
//
// Graph op: one block whose arguments are the graph inputs, in order. Its
// attributes carry what the types cannot: input names, the symbolic input
// dims (types print every symbolic dim as '?'; "26N" is 26 times symbol N),
// the graph output names and the symbol table (the first symbol is always the
// batch "N"). `sym_name` is PrintOptions::graphName; the parser ignores it.
//
// Nodes: `"cagr.<mnemonic>"` (ops.def). Attributes print as `name` (the node
// name, left out when empty), then the op attributes in schema order, then
// the reserved ones below. int64 is `1 : i64`; double is `0.5 : f64` (the
// shortest decimal that reads back exactly, always with a '.'; inf/nan as
// the IEEE bit pattern `0x7FF0000000000000 : f64`); string is `"..."` with
// MLIR escapes (`\\`, `\22`, `\0A`); int list `[1, 2]`; float list `[1.0, 2.5]`.
// Reserved attributes, not op attributes:
//   name          the node name.
//   operand_mask  printed only when an operand is absent (kNoValue): one entry
//                 per operand slot, 0 = absent; the operand list then holds
//                 only the present ones. MLIR has no holes in operand lists.
//                 Only optional slots of fixed-arity ops may be 0.
//   result_names  printed only when an output's name differs from what the
//                 parser would give it (`node`, `node:i`, or its graph output
//                 name).
//
// Constants: `"cagr.constant"() {name = "...", value = dense<...> : T} : () -> T`
// (or `weights_offset = N : i64` instead of a value: see WeightsSink),
// data exact: `dense<>` when empty, a splat `dense<v>` when every element has
// the same bits, a nested list `dense<[[1.0, 2.0], ...]>` up to 16 elements,
// else `dense<"0xHEX">` (raw little-endian bytes; i1 is bit-packed LSB first,
// the layout MLIR 15 expects). With PrintOptions::elideWeights the data is
// left out, `{elided, name = "..."}`, and parsing an elided constant gives a
// zero-filled tensor of the result type. Constants print just before the
// first node that uses them; unused ones (e.g. left behind by a rewrite; see
// Graph::compact) print last, before the return.
//
// Graph outputs: the terminator `"cagr.return"(...)`. SSA values are numbered
// as MLIR numbers them (%argN, %N, %N#i), so mlir-opt reprints the same names.
//
// The parser also reads what mlir-opt prints back, generic
// (`--mlir-print-op-generic`) or custom (`module { ... }`): attributes in any
// order, any SSA names, `%a, %b = ` result lists, `loc(...)` and `#alias = ...`
// lines (skipped), `//` comments, any MLIR float spelling (`1.000000e-05`, hex
// bit patterns), `: type` suffixes, dense data as hex, splat or nested lists
// (bool as true/false), and `opaque<"elided_large_const", ...>`
// (--mlir-elide-elementsattrs-if-larger) as an elided constant. Each node goes
// through Graph::addNode, so shapes are re-inferred and verified; operand and
// result types in the text must agree with them ('?' matches a symbolic dim).
// Errors start with `source:line:column:` and say what was expected; their code
// is kCorrupt for malformed text, else that of the underlying failure
// (kUnsupported for an unknown op, kInvalidArgument from shape inference).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr {

/// Where printGraph puts large constants instead of hex text: their raw
/// little-endian bytes, each at a 64-byte aligned offset of one binary stream,
/// referenced from the text as `{weights_offset = N : i64, ...}` (the type gives
/// the size). Half the bytes of hex, and a reader can map them in place.
struct WeightsSink {
  std::ostream* out = nullptr;
  size_t minBytes = size_t{1} << 16;  // smaller constants stay inline
  uint64_t size = 0;                  // bytes written so far (padding included)
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a of those bytes
};

/// Knobs for printGraph.
struct PrintOptions {
  /// Leaves constant data out (`elided` constants, shape from the type).
  bool elideWeights = false;
  /// The graph op's `sym_name`.
  std::string graphName = "main";
  /// When set (and weights are not elided), large constants go there.
  WeightsSink* weights = nullptr;
};

/// The binary stream a printed graph's `weights_offset` constants refer to,
/// held in memory (typically a mapped file) that `owner` keeps alive; parsed
/// constants are views of it, not copies.
struct WeightsBlob {
  std::shared_ptr<void> owner;
  std::byte* data = nullptr;
  uint64_t size = 0;
  std::string path;  // for messages
};

/// Prints `g` as a generic-syntax MLIR module (see above). Deterministic.
std::string printGraph(const Graph& g, const PrintOptions& opts = {});

/// Parses printGraph's output (or mlir-opt's reprint of it) back into a graph.
/// `sourceName` prefixes error locations.
/// `weights` resolves `weights_offset` constants (an error names the constant
/// when there is none, or the offset and size fall outside it).
StatusOr<Graph> parseGraph(std::string_view text, const std::string& sourceName = "<text>",
                           const WeightsBlob* weights = nullptr);

/// The weights file of a plan, as its integrity line names and seals it.
struct PlanWeights {
  std::string file;  // a plain file name, next to the plan; empty: none
  uint64_t bytes = 0, hash = 0;  // size and FNV-1a of the whole file
};

/// A plan file as `cagr optimize -o` writes it: a first line
/// "// cagr-plan v1 fnv1a64=<16 hex digits> bytes=<n>" that seals the printed
/// graph after it (every byte; a comment to MLIR tools), followed, when large
/// constants went to a weights file, by " weights=<file> weights_fnv1a64=<hex>
/// weights_bytes=<n>".
std::string sealPlan(std::string_view graphText, const PlanWeights& weights = {});
/// A sealed plan's graph text and weights-file seal.
struct UnsealedPlan {
  std::string_view text;
  PlanWeights weights;
};
/// Fails, naming `source`, when the integrity line is missing or of an unknown
/// version, or the text is truncated or altered. (The weights file is checked
/// by whoever maps it: see PlanWeights.)
StatusOr<UnsealedPlan> unsealPlan(std::string_view file, const std::string& source);

/// Writes `plan` to `path` (a .cagr file): the sealed text, and constants of
/// 64 KiB or more in "<path>.weights" next to it (raw bytes, sealed on the
/// text's first line). Both are written through temporaries renamed into
/// place; neither replaces anything but a regular file.
Status savePlanFile(const Graph& plan, const std::string& path);
/// Reads a plan savePlanFile wrote: checks both seals, maps the weights file
/// (constants are views of it: held once, by the page cache) and parses.
StatusOr<Graph> loadPlanFile(const std::string& path);

}  // namespace cagr
