// SCAFFOLD (being written this session): set_kernel — replace this whole file.
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {
class Impl : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kSetKernel; }
  void candidates(const Graph&, const Target&, bool, std::vector<Candidate>&) const override {}
  Status apply(Graph&, const Target&, const Action&) const override { return unsupported("not written yet"); }
};
}  // namespace
const Rewrite* setKernel() {
  static const Impl r;
  return &r;
}
}  // namespace cagr::rewrites
