// ONNX import: a model exported from PyTorch (TorchScript exporter, opset 17,
// or the dynamo exporter, opset 18-20) becomes HIR. Shape arithmetic is folded
// to static attributes, EmbeddingBag loops become EmbeddingBag, and the
// pairwise-interaction, FM and CIN subgraphs become Interaction / FM / CIN
// where they match exactly.
#pragma once

#include <string>
#include <vector>

#include "cagr/graph.h"
#include "cagr/status.h"

namespace cagr {

struct ImportOptions {
  /// Recognise Interaction / FM / CIN subgraphs (EmbeddingBag loops are always
  /// recognised: there is no other way to import them).
  bool recognizePatterns = true;
};

/// What the importer did beyond op-by-op translation, for `cagr inspect`.
struct ImportReport {
  int64_t opset = 0;
  std::string producer;                 // "pytorch 2.15.0"
  std::vector<std::string> recognized;  // "EmbeddingBag(sum) from Loop '/emb_l.0/Loop'"
  /// Regions that stayed generic: "2 x MatMul of two activations (...): '/a', '/b'".
  std::vector<std::string> generic;
  int foldedNodes = 0;                  // ONNX nodes evaluated at import time
};

/// Imports the ONNX file at `path` (external-data files are resolved next to it).
/// Errors name the file and the node / op / opset that could not be imported.
StatusOr<Graph> importOnnx(const std::string& path, const ImportOptions& options = {},
                           ImportReport* report = nullptr);

}  // namespace cagr
