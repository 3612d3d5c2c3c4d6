// Interaction / FM kernels, alone or fused with the lookups, views and
// concats that feed them and the concat that joins their output with the
// dense part (Pattern::kInteraction / kFM, kernels own.interaction / own.fm).
// Per tile of samples the kernel assembles each sample's [F, D] row in cache
// straight from the tables (the concatenated embeddings never exist in
// memory), runs the interaction on it and writes the joined output row.
// Preconditions: every value in the group is batch-major ([B, ...], static
// trailing dims) and the concats join along axis 1; other groups are declined.
#pragma once

#include "backends/cpu/step.h"

namespace cagr::cpu {

/// A step for an Interaction / FM group (single node or fused), or kUnsupported.
StatusOr<std::unique_ptr<Step>> makeInteractionStep(const StepRequest& r);

}  // namespace cagr::cpu
