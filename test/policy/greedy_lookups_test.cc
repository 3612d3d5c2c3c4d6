// Greedy batches DeepFM's embedding front (22 fields x a dim-16 and a dim-1
// table = 44 row Gathers): on the CPU profiles (built-in x86-64 and the
// measured host) and the GPU ones (built-in H200 and the measured H200), at
// batch 256 and 4096, no lookup of a constant table is left as a Gather of
// its own — they all run inside EmbeddingBags kernels (one per concat on the
// CPU at 4096, one for all 44 elsewhere; the model chooses) and no Concat
// copies their rows. On the H200 this used to lose to assign_stream, which
// moved the lookups to other streams where the batched kernel (then on
// stream 0) serialised them; the batched nodes now keep their stream. DCN-v2
// batches its 26 lookups too. Plans and latencies here are modelled.
#include <gtest/gtest.h>

#include <cctype>

#include "../rewrite/rewrite_test_util.h"
#include "cagr/policy.h"

namespace cagr {
namespace {

struct Plan {
  int bags = 0, tables = 0, tableGathers = 0, concats = 0;
};

Plan greedyPlan(const std::string& model, const std::string& target, int64_t batch) {
  Graph g = rwtest::zoo(model);
  Target t = rwtest::target(target.find('/') == std::string::npos ? target : rwtest::repoPath(target));
  auto policy = makePolicy("greedy");
  EXPECT_TRUE(policy.isOk());
  EnvConfig cfg;
  cfg.batch = batch;
  cfg.disabled.push_back(ActionKind::kSetPrecision);
  auto r = optimize(g, t, **policy, cfg);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  Plan p;
  if (!r.isOk()) return p;
  for (const Node& n : r->plan.nodes()) {
    if (n.op == OpKind::kEmbeddingBags) ++p.bags, p.tables += static_cast<int>(n.attrs.getInt("num_tables"));
    if (n.op == OpKind::kConcat) ++p.concats;
    bool tableGather = n.op == OpKind::kGather && r->plan.isConstant(n.inputs[0]) && r->plan.type(n.inputs[0]).rank() == 2;
    p.tableGathers += tableGather ? 1 : 0;
  }
  return p;
}

class GreedyDeepFm : public ::testing::TestWithParam<std::pair<const char*, int64_t>> {};

TEST_P(GreedyDeepFm, BatchesEveryLookup) {
  auto [target, batch] = GetParam();
  Plan p = greedyPlan("deepfm", target, batch);
  EXPECT_GE(p.bags, 1);
  EXPECT_LE(p.bags, 2);
  EXPECT_EQ(p.tables, 44);
  EXPECT_EQ(p.tableGathers, 0);
  EXPECT_EQ(p.concats, 0);  // the FM stack and the linear terms are the batched output (or slices of it)
}

INSTANTIATE_TEST_SUITE_P(Profiles, GreedyDeepFm,
                         ::testing::Values(std::pair<const char*, int64_t>{"x86-64", 256},
                                           std::pair<const char*, int64_t>{"x86-64", 4096},
                                           std::pair<const char*, int64_t>{"h200", 256},
                                           std::pair<const char*, int64_t>{"h200", 4096},
                                           std::pair<const char*, int64_t>{"bench/results/hw/host-cpu-xeon.json", 256},
                                           std::pair<const char*, int64_t>{"bench/results/hw/host-cpu-xeon.json", 4096},
                                           std::pair<const char*, int64_t>{"bench/results/hw/h200-measured.json", 256},
                                           std::pair<const char*, int64_t>{"bench/results/hw/h200-measured.json", 4096}),
                         [](const auto& info) {
                           std::string name = info.param.first;
                           name = name.substr(name.find_last_of('/') + 1);
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name + "_b" + std::to_string(info.param.second);
                         });

TEST(GreedyDcnV2, BatchesItsLookupsOnTheCpu) {
  for (const char* target : {"x86-64", "bench/results/hw/host-cpu-xeon.json"}) {
    Plan p = greedyPlan("dcnv2", target, 4096);
    EXPECT_EQ(p.bags, 1) << target;
    EXPECT_EQ(p.tables, 26) << target;
    EXPECT_EQ(p.tableGathers, 0) << target;
  }
}

}  // namespace
}  // namespace cagr
