// The rewrite registry: one factory per action file under actions/.
#pragma once

#include "cagr/rewrite.h"

namespace cagr::rewrites {

const Rewrite* batchEmbeddings();  // actions/batch_embeddings.cc
const Rewrite* fuse();             // actions/fuse.cc
const Rewrite* foldBatchNorm();    // actions/fold_batch_norm.cc
const Rewrite* fuseInteraction();  // actions/fuse_interaction.cc
const Rewrite* eliminateConcat();  // actions/eliminate_concat.cc
const Rewrite* deadCode();         // actions/dead_code.cc
const Rewrite* cse();              // actions/cse.cc
const Rewrite* foldConstants();    // actions/fold_constants.cc
const Rewrite* setKernel();        // actions/set_kernel.cc
const Rewrite* setLayout();        // actions/set_layout.cc
const Rewrite* setPrecision();     // actions/set_precision.cc
const Rewrite* assignStream();     // actions/assign_stream.cc
const Rewrite* reorder();          // actions/reorder.cc

}  // namespace cagr::rewrites
