// savePlanFile / loadPlanFile: a plan on disk is its sealed text plus, for
// large constants, a binary weights file that loading maps instead of reading
// (a multi-GB model then costs its weights once, not text + copy).
#include <filesystem>

#include "cagr/text.h"
#include "support/files.h"

namespace cagr {

Status savePlanFile(const Graph& plan, const std::string& path) {
  namespace fs = std::filesystem;
  const std::string weightsPath = path + ".weights";
  WeightsSink sink;
  std::string text;
  CAGR_RETURN_IF_ERROR(writeAtomically(weightsPath, [&](std::ofstream& out) {
    sink.out = &out;
    text = printGraph(plan, PrintOptions{false, "plan", &sink});
  }));
  PlanWeights weights;
  if (sink.size > 0) {
    weights = PlanWeights{fs::path(weightsPath).filename().string(), sink.size, sink.hash};
  } else {
    std::error_code ec;
    fs::remove(weightsPath, ec);  // nothing large: the text holds every constant
  }
  return writeAtomically(path, [&](std::ofstream& out) { out << sealPlan(text, weights); });
}

StatusOr<Graph> loadPlanFile(const std::string& path) {
  CAGR_ASSIGN_OR_RETURN(std::string file, readRegularFile(path, "plan"));
  CAGR_ASSIGN_OR_RETURN(UnsealedPlan plan, unsealPlan(file, path));
  if (plan.weights.file.empty()) return parseGraph(plan.text, path);
  const std::string weightsPath = (std::filesystem::path(path).parent_path() / plan.weights.file).string();
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(weightsPath, ec);
  if (ec) return notFound("plan '" + path + "': its weights file '" + weightsPath + "' is missing");
  if (size != plan.weights.bytes) {
    return corrupt("plan '" + path + "': weights file '" + weightsPath + "' has " + std::to_string(size) +
                   " bytes, " + std::to_string(plan.weights.bytes) + " sealed (truncated or replaced)");
  }
  CAGR_ASSIGN_OR_RETURN(MappedRegion region, mapFileRegion(weightsPath, 0, size));
  if (fnv1a64(region.data, region.size) != plan.weights.hash) {
    return corrupt("plan '" + path + "': weights file '" + weightsPath +
                   "' was altered after cagr optimize wrote it (checksum mismatch): re-run cagr optimize");
  }
  WeightsBlob blob{region.owner, region.data, region.size, weightsPath};
  return parseGraph(plan.text, path, &blob);
}

}  // namespace cagr
