// SCAFFOLD (being written this session): set_layout — replace this whole file.
#include "rewrite/actions.h"

namespace cagr::rewrites {
namespace {
class Impl : public Rewrite {
 public:
  ActionKind kind() const override { return ActionKind::kSetLayout; }
  void candidates(const Graph&, const Target&, bool, std::vector<Candidate>&) const override {}
  Status apply(Graph&, const Target&, const Action&) const override { return unsupported("not written yet"); }
};
}  // namespace
const Rewrite* setLayout() {
  static const Impl r;
  return &r;
}
}  // namespace cagr::rewrites
