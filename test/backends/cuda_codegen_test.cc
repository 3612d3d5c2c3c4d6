// The CUDA code generator without a GPU (issue 6): every zoo model's plans
// (none and greedy for the H200, and plans with each kind of precision
// decision) lower through the runtime's lowering (cuda_program.h), every
// group it does not keep generates, and the module compiles with NVRTC to
// PTX and CUBIN for sm_90a; launch rules cover the work at several batch
// sizes; unsupported groups name their node; the compile cache hits on a
// second compile and recompiles a corrupted entry. Without the CUDA toolkit
// (no CAGR_HAVE_CUDA) the file compiles to nothing.
#include <gtest/gtest.h>

#if CAGR_HAVE_CUDA

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "../rewrite/rewrite_test_util.h"
#include "backends/cuda/codegen.h"
#include "backends/cuda/cuda_program.h"
#include "backends/plan_memory.h"
#include "cagr/policy.h"
#include "cpu_test_util.h"
#include "ir/graph_queries.h"
#include "lower/pad_gemm_dims.h"
#include "lower/split_concat_gemm.h"
#include "support/scoped_env.h"

namespace cagr {
namespace {

namespace fs = std::filesystem;
using rectest::attrs;

// One cache directory for the whole run (never one left by earlier runs).
const std::string& cacheDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "cagr-nvrtc-test-XXXXXX").string();
    char* d = mkdtemp(tmpl.data());
    return std::string(d != nullptr ? d : "/tmp/cagr-nvrtc-test");
  }();
  return dir;
}

// Removes the cache directory when the run ends.
class CacheCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(cacheDir(), ec);
  }
};
const ::testing::Environment* const kCleanup = ::testing::AddGlobalTestEnvironment(new CacheCleanup);

cuda::NvrtcOptions options(const std::string& arch = "sm_90a") {
  cuda::NvrtcOptions o;
  o.arch = arch;
  o.cacheDir = cacheDir();
  return o;
}

using rwtest::h200;

// The policy's H200 plan with every reduced precision allowed (unmeasured):
// the generated code of reduced-precision plans is under test here.
Graph optimized(const Graph& hir, const std::string& policy) {
  auto p = makePolicy(policy);
  EnvConfig cfg;
  cfg.batch = 4096;
  cfg.precision = unrestrictedPrecision();
  auto r = optimize(hir, h200(), **p, cfg);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  return r.isOk() ? r->plan : hir;
}

// Concrete extents of kernel `k` of `g` with every symbol bound to `n`.
std::vector<int64_t> extentsAt(const Graph& g, const cuda::GeneratedKernel& k, int64_t n) {
  std::vector<int64_t> out;
  for (const cuda::ExtentRef& e : k.extents) {
    Dim d = g.type(k.params[static_cast<size_t>(e.param)]).dims[static_cast<size_t>(e.dim)];
    out.push_back(isSymbolic(d) ? dimCoef(d) * n : d);
  }
  return out;
}

// Launch sanity of every kernel at several batch sizes: a valid grid that
// never shrinks as the batch grows, blocks of whole warps (or the CIN's
// thread tile), dynamic shared memory within 227 KiB (above the default
// 48 KiB the executable opts in; an sm_90 block may take 227 KiB, only
// sm_90 kernels take over 96).
void checkLaunches(const Graph& g, const std::vector<cuda::GeneratedKernel>& kernels) {
  for (const auto& k : kernels) {
    unsigned last = 0;
    for (int64_t n : {1, 256, 4096, 65536}) {
      cuda::Launch l = k.launch(extentsAt(g, k, n));
      EXPECT_GE(l.grid[0], std::max(last, 1u)) << k.name << " at batch " << n;
      EXPECT_GE(l.block[0], 32u) << k.name;
      EXPECT_LE(l.block[0], 1024u) << k.name;
      EXPECT_LE(l.sharedBytes, 227u * 1024) << k.name;
      last = l.grid[0];
    }
  }
}

// Compiles `src` for sm_90a and checks every kernel's entry is in the PTX.
void compileAndCheck(const std::string& src, const std::vector<cuda::GeneratedKernel>& kernels,
                     const std::string& what) {
  auto m = cuda::compileModule(src, options());
  ASSERT_TRUE(m.isOk()) << what << ": " << m.status().message();
  EXPECT_FALSE(m->cubin.empty()) << what;
  EXPECT_EQ(m->log.find("warning"), std::string::npos) << what << ": " << m->log;
  for (const auto& k : kernels) EXPECT_NE(m->ptx.find(".entry " + k.entry + "("), std::string::npos) << k.entry;
}

// Lowers a plan the way the CUDA backend does (its graph-level steps first,
// cuda::prepareGraph) and compiles its module.
void lowerAndCompile(const Graph& given, const std::string& what, size_t minKernels = 1) {
  ASSERT_TRUE(verifyPlan(given, h200()).isOk()) << what << ": " << verifyPlan(given, h200()).message();
  auto prepared = cuda::prepareGraph(given, h200());
  ASSERT_TRUE(prepared.isOk()) << what << ": " << prepared.status().message();
  const Graph& plan = *prepared;
  ASSERT_TRUE(verifyPlan(plan, h200()).isOk()) << what << " padded: " << verifyPlan(plan, h200()).message();
  auto p = cuda::lowerPlan(plan, h200());
  ASSERT_TRUE(p.isOk()) << what << ": " << p.status().message();
  ASSERT_GE(p->kernels.size(), minKernels) << what;
  checkLaunches(plan, p->kernels);
  compileAndCheck(p->moduleSource, p->kernels, what);
}

// The graph the backend runs keeps the plan's node names: planNodeIds maps
// each node back to the plan's (what profile() reports), and the nodes a
// lowering step added (DCN-v2's head over [cross | deep] split in two
// GEMMs) to none.
TEST(CudaPrepareGraph, NodesMapBackToThePlanExceptThoseAStepAdded) {
  Graph plan = optimized(rwtest::zoo("dcnv2"), "greedy");
  auto prepared = cuda::prepareGraph(plan, h200());
  ASSERT_TRUE(prepared.isOk()) << prepared.status().message();
  std::vector<NodeId> ids = cuda::planNodeIds(plan, *prepared);
  ASSERT_EQ(ids.size(), prepared->nodes().size());
  size_t added = 0;
  for (size_t n = 0; n < ids.size(); ++n) {
    const Node& m = prepared->nodes()[n];
    if (ids[n] < 0) {
      ++added;
      EXPECT_NE(m.name.find(".part"), std::string::npos) << m.name;
      continue;
    }
    EXPECT_EQ(plan.node(ids[n]).name, m.name);
    EXPECT_EQ(plan.node(ids[n]).op, m.op) << m.name;
  }
  EXPECT_EQ(added, 1u);
}

// ---- every zoo model, as planned for the H200 ----

struct ZooCase {
  std::string model, policy;
};
void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << c.model << "/" << c.policy;
}

class ZooCodegen : public ::testing::TestWithParam<ZooCase> {};

// Sets $CAGR_CUDA_CIN for one scope (the lowering's override of every CIN
// layer's kernel), restoring the old value after.
class ForceCin : public ScopedEnv {
 public:
  explicit ForceCin(const char* kernel) : ScopedEnv("CAGR_CUDA_CIN", kernel) {}
};

TEST_P(ZooCodegen, EveryGeneratedGroupCompilesForSm90a) {
  const ZooCase& c = GetParam();
  Graph plan = optimized(rwtest::zoo(c.model), c.policy);
  lowerAndCompile(plan, c.model + "/" + c.policy);
  bool cin = std::any_of(plan.nodes().begin(), plan.nodes().end(), [](const Node& n) { return n.op == OpKind::kCIN; });
  if (cin) {  // and with every CIN layer on cublaslt.cin: its kernels around the GEMM
    ForceCin force("cublaslt");
    lowerAndCompile(plan, c.model + "/" + c.policy + " on cublaslt.cin");
  }
}

std::vector<ZooCase> zooCases() {
  std::vector<ZooCase> out;
  for (const char* m : {"autoint", "dcnv2", "deepfm", "dlrm_avazu", "dlrm_criteo", "ngcf", "wide_deep", "xdeepfm"}) {
    for (const char* p : {"none", "greedy"}) out.push_back({m, p});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(H200, ZooCodegen, ::testing::ValuesIn(zooCases()),
                         [](const auto& info) { return info.param.model + "_" + info.param.policy; });

// ---- precision decisions ----

// The lookup tables of `g` stored as bf16, f16, int8 rows and f32, a
// quarter each (in blocks, so tables of one kind stay neighbours): one
// module holds every table kind and lookups that mix them.
Graph withMixedTables(Graph g) {
  const Precision kinds[] = {Precision::kBF16, Precision::kF16, Precision::kInt8Rowwise, Precision::kF32};
  std::vector<ValueId> tables;
  for (const Node& n : g.nodes()) {
    size_t count = n.op == OpKind::kEmbeddingBags ? static_cast<size_t>(n.attrs.getInt("num_tables"))
                   : n.op == OpKind::kEmbeddingBag || n.op == OpKind::kGather ? 1
                                                                              : 0;
    for (size_t t = 0; t < count; ++t) {
      ValueId v = n.inputs[t];
      if (g.isConstant(v) && g.type(v).dtype == DType::kF32 && g.type(v).rank() == 2) tables.push_back(v);
    }
  }
  for (size_t i = 0; i < tables.size(); ++i) g.mutableValue(tables[i]).mir.storage = kinds[i * 4 / tables.size()];
  return g;
}

TEST(CudaCodegenPrecision, ReducedTablesCompile) {
  // dlrm_criteo greedy: the tables sit inside the fused interaction kernel;
  // deepfm none: one Gather per table.
  for (const char* model : {"dlrm_criteo", "deepfm"}) {
    Graph plan = withMixedTables(optimized(rwtest::zoo(model), model == std::string("deepfm") ? "none" : "greedy"));
    auto prog = cuda::lowerPlan(plan, h200());
    ASSERT_TRUE(prog.isOk()) << prog.status().message();
    std::string names;
    for (const auto& k : prog->kernels) names += k.name + "\n";
    if (model == std::string("deepfm")) {
      for (const char* p : {"bf16", "f16", "int8_rowwise"}) {
        EXPECT_NE(names.find(std::string("one-hot, ") + p), std::string::npos) << names;
      }
    }
    for (const char* type : {"__nv_bfloat16* tab", "__half* tab", "unsigned char* tab", "float* tab"}) {
      EXPECT_NE(prog->moduleSource.find(type), std::string::npos) << model << " reads no " << type;
    }
    checkLaunches(plan, prog->kernels);
    compileAndCheck(prog->moduleSource, prog->kernels, std::string(model) + " mixed tables");
  }
}

TEST(CudaCodegenPrecision, CinMathModesCompile) {
  // xdeepfm's three CIN layers on tensor cores in tf32, bf16 and f16 (f32,
  // the FFMA kernel, is in the none plan of the zoo test); tf32 and bf16 on
  // the wmma kernel, as CAGR_CUDA_CIN_TF32=wmma and CAGR_CUDA_CIN_BF16=wmma
  // ask (their defaults on sm_90 are the step kernels: CudaCinPoolCodegen,
  // CudaCinWgCodegen).
  setenv("CAGR_CUDA_CIN_TF32", "wmma", 1);
  setenv("CAGR_CUDA_CIN_BF16", "wmma", 1);
  Graph g = optimized(rwtest::zoo("xdeepfm"), "greedy");
  const Precision modes[] = {Precision::kTF32, Precision::kBF16, Precision::kF16};
  int cins = 0;
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kCIN && cins < 3) n.mir.math = modes[cins++];
  }
  ASSERT_EQ(cins, 3);
  auto prog = cuda::lowerPlan(g, h200());
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  std::vector<std::string> seen;
  for (const auto& k : prog->kernels) {
    if (k.name.rfind("nvrtc.cin", 0) == 0) seen.push_back(k.name);
  }
  ASSERT_EQ(seen.size(), 3u);
  // Greedy fuses each layer's ReLU into it ("...]+relu").
  EXPECT_EQ(seen[0].rfind("nvrtc.cin[200x22x22, tf32, wmma]", 0), 0u) << seen[0];
  EXPECT_EQ(seen[1].rfind("nvrtc.cin[200x200x22, bf16, wmma]", 0), 0u) << seen[1];
  EXPECT_EQ(seen[2].rfind("nvrtc.cin[200x200x22, f16, wmma]", 0), 0u) << seen[2];
  for (int64_t n : {1, 4096}) {
    for (const auto& k : prog->kernels) {
      if (k.name.rfind("nvrtc.cin", 0) != 0) continue;
      cuda::Launch l = k.launch(extentsAt(g, k, n));
      // One 224-row tile covers O = 200; 64 columns (4 samples x 16) per block.
      EXPECT_EQ(l.grid[1], 1u);
      EXPECT_EQ(int64_t{l.grid[0]}, (n * 16 + 63) / 64) << k.name << " at batch " << n;
      EXPECT_EQ(l.block[0], 128u);
    }
  }
  compileAndCheck(prog->moduleSource, prog->kernels, "xdeepfm cin tf32/bf16/f16");
  unsetenv("CAGR_CUDA_CIN_TF32");
  unsetenv("CAGR_CUDA_CIN_BF16");
}

TEST(CudaCodegenPrecision, CinOnCublasLtInEveryMathMode) {
  // xdeepfm's CIN layers on cublaslt.cin (the plan's choice, no override):
  // f32 / tf32 / bf16, then f16; one kCinGemm step each, W rounded for the
  // reduced modes, Z rows padded to 16 bytes, the module compiles.
  const Graph base = optimized(rwtest::zoo("xdeepfm"), "greedy");
  auto lt = kernelByName("cublaslt.cin");
  ASSERT_TRUE(lt.isOk()) << lt.status().message();
  for (auto modes : {std::vector<Precision>{Precision::kF32, Precision::kTF32, Precision::kBF16},
                     std::vector<Precision>{Precision::kF16, Precision::kF16, Precision::kF16}}) {
    Graph g = base;
    size_t cins = 0;
    std::vector<int32_t> cinGroups;
    for (Node& n : g.mutableNodes()) {
      if (n.op != OpKind::kCIN || cins >= modes.size()) continue;
      n.mir.math = modes[cins++];
      n.mir.kernel = *lt;
      if (n.mir.group >= 0) cinGroups.push_back(n.mir.group);
    }
    ASSERT_EQ(cins, 3u);
    for (Node& n : g.mutableNodes()) {  // the fused ReLU runs on the layer's kernel too
      if (std::find(cinGroups.begin(), cinGroups.end(), n.mir.group) != cinGroups.end()) n.mir.kernel = *lt;
    }
    ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << verifyPlan(g, h200()).message();
    auto prog = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(prog.isOk()) << prog.status().message();
    ASSERT_EQ(prog->cins.size(), 3u);
    std::vector<std::string> names;
    for (const auto& s : prog->steps) {
      if (s.kind == cuda::StepKind::kCinGemm) names.push_back(s.name);
      if (s.kind == cuda::StepKind::kGenerated) {
        EXPECT_EQ(prog->kernels[static_cast<size_t>(s.kernel)].name.rfind("nvrtc.cin", 0), std::string::npos);
      }
    }
    ASSERT_EQ(names.size(), 3u);
    EXPECT_EQ(names[0].rfind(std::string("cublaslt.cin[200x22x22, ") + precisionName(modes[0]) + "]", 0), 0u)
        << names[0];
    EXPECT_EQ(names[1].rfind(std::string("cublaslt.cin[200x200x22, ") + precisionName(modes[1]) + "]", 0), 0u)
        << names[1];
    for (size_t i = 0; i < 3; ++i) {
      const cuda::CinGemm& c = prog->cins[i];
      EXPECT_EQ(c.wKernel >= 0, c.math != Precision::kF32) << i;
      EXPECT_EQ(c.ldz * static_cast<int64_t>(c.elementBytes) % 16, 0) << i;
      EXPECT_GE(c.ldz, c.K());
      EXPECT_EQ(prog->kernels[static_cast<size_t>(c.zKernel)].name.find("outer product") != std::string::npos, true);
      // A chunk's Z and Y stay within the budget; every sample is covered.
      int64_t rows = c.chunkRows(4096, cuda::kCinChunkBudget);
      EXPECT_GE(rows, 1);
      EXPECT_LE(static_cast<size_t>(rows) * c.bytesPerSample(), cuda::kCinChunkBudget);
      EXPECT_LE(c.scratchBytes(4096, cuda::kCinChunkBudget), cuda::kCinChunkBudget + c.weightBytes() + 1024);
      EXPECT_EQ(c.chunkRows(1, cuda::kCinChunkBudget), 1);
      EXPECT_EQ(c.chunkRows(4096, 1), 1);
    }
    checkLaunches(g, prog->kernels);
    compileAndCheck(prog->moduleSource, prog->kernels, std::string("xdeepfm cublaslt.cin ") + precisionName(modes[0]));
  }
}

TEST(CudaCodegenPrecision, CinOverrideChoosesEitherKernel) {
  Graph g = optimized(rwtest::zoo("xdeepfm"), "greedy");
  const auto count = [&](cuda::StepKind kind, const std::string& prefix) {
    auto p = cuda::lowerPlan(g, h200());
    EXPECT_TRUE(p.isOk()) << p.status().message();
    int n = 0;
    for (const auto& s : p.isOk() ? p->steps : std::vector<cuda::ProgramStep>{}) {
      n += s.kind == kind && s.name.rfind(prefix, 0) == 0;
    }
    return n;
  };
  {
    ForceCin force("cublaslt");
    EXPECT_EQ(count(cuda::StepKind::kCinGemm, "cublaslt.cin["), 3);
  }
  {
    ForceCin force("nvrtc");
    EXPECT_EQ(count(cuda::StepKind::kGenerated, "nvrtc.cin["), 3);
  }
}

// xdeepfm's unoptimized plan with each CIN layer fused with the ReLU after
// it by the fuse rewrite (a legal kCin epilogue on the H200), on `kernel`.
Graph cinWithRelu(const std::string& kernel) {
  Graph g = optimized(rwtest::zoo("xdeepfm"), "none");
  auto k = kernelByName(kernel);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kCIN && k.isOk()) n.mir.kernel = *k;
  }
  int fused = 0;
  for (const Candidate& c : rwtest::candidatesOf(g, h200(), ActionKind::kFuse)) {
    const auto& m = c.action.nodes;
    if (m.size() == 2 && g.node(m[0]).op == OpKind::kCIN && g.node(m[1]).op == OpKind::kRelu) {
      g = rwtest::applied(g, h200(), c.action);
      ++fused;
    }
  }
  EXPECT_EQ(fused, 3) << "fuse offers CIN + ReLU for each of xdeepfm's three layers";
  return g;
}

TEST(CudaCodegenPrecision, CinWithFusedReluOnEitherKernel) {
  // The ReLU after each CIN layer runs in the layer's own kernel: nvrtc.cin
  // stores through the tail, cublaslt.cin's transpose kernel applies it; no
  // separate eltwise step reads the layer's output back. The rule: a CIN
  // anchors a kCin group with the elementwise members after it that its
  // kernel's epilogueOps accept (classifyGroup, kernelsFor, the catalog).
  for (const std::string kernel : {"nvrtc.cin", "cublaslt.cin"}) {
    Graph g = cinWithRelu(kernel);
    ASSERT_TRUE(verifyPlan(g, h200()).isOk()) << kernel << ": " << verifyPlan(g, h200()).message();
    auto prog = cuda::lowerPlan(g, h200());
    ASSERT_TRUE(prog.isOk()) << kernel << ": " << prog.status().message();
    int cins = 0, relus = 0;
    for (const auto& s : prog->steps) {
      const Node& first = g.node(s.nodes.front());
      relus += s.nodes.size() == 1 && first.op == OpKind::kRelu && g.type(first.outputs[0]).rank() == 3;
      if (s.name.find(".cin[") == std::string::npos) continue;
      ++cins;
      EXPECT_EQ(s.name.rfind(kernel + "[", 0), 0u) << s.name;
      EXPECT_NE(s.name.find("+relu"), std::string::npos) << s.name;
      EXPECT_EQ(s.nodes.size(), 2u) << s.name;
      EXPECT_EQ(s.kind, kernel == "cublaslt.cin" ? cuda::StepKind::kCinGemm : cuda::StepKind::kGenerated) << s.name;
      EXPECT_EQ(g.node(g.value(s.writes.at(0)).producer).op, OpKind::kRelu) << s.name << " writes the ReLU's output";
    }
    EXPECT_EQ(cins, 3) << kernel;
    EXPECT_EQ(relus, 0) << kernel << ": each [B,200,16] ReLU is in a CIN step, none alone";
    checkLaunches(g, prog->kernels);
    compileAndCheck(prog->moduleSource, prog->kernels, "xdeepfm CIN + ReLU on " + kernel);
  }
}

TEST(CudaCodegenPrecision, CinEpilogueRules) {
  // cublaslt.cin takes one-operand activations only; an Add of another
  // tensor after a CIN fuses on nvrtc.cin (any elementwise epilogue) but
  // not on cublaslt.cin; a CIN after an elementwise op is no group.
  rectest::Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 6, 8});
  ValueId c1 = b.op(OpKind::kCIN, {x, x, b.constant("w1", {40, 36}, 1)}, "c1");
  ValueId a = b.op(OpKind::kAdd, {c1, b.input("y", DType::kF32, {kBatch, 40, 8})}, "a");
  b.g.addOutput(a);
  Graph g = b.g;
  NodeId cin = g.value(c1).producer, add = g.value(a).producer;
  auto shape = classifyGroup(g, {cin, add});
  ASSERT_TRUE(shape.isOk()) << shape.status().message();
  EXPECT_EQ(shape->pattern, Pattern::kCin);
  std::vector<std::string> names;
  for (KernelId k : kernelsFor(g, {cin, add}, *shape, h200(), nullptr)) names.push_back(kernelInfo(k).name);
  EXPECT_NE(std::find(names.begin(), names.end(), "nvrtc.cin"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "cublaslt.cin"), names.end());
  // The plan asks cublaslt.cin for a group it cannot run: lowering says so and generates nvrtc.cin.
  Graph forced = g;
  auto lt = kernelByName("cublaslt.cin");
  ASSERT_TRUE(lt.isOk());
  for (NodeId m : {cin, add}) {
    forced.mutableNodes()[static_cast<size_t>(m)].mir.group = 0;
    forced.mutableNodes()[static_cast<size_t>(m)].mir.kernel = *lt;
  }
  auto prog = cuda::lowerPlan(forced, h200());
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  ASSERT_EQ(prog->steps.size(), 1u);
  EXPECT_EQ(prog->steps[0].kind, cuda::StepKind::kGenerated);
  EXPECT_NE(prog->steps[0].name.find("plan asked cublaslt.cin"), std::string::npos) << prog->steps[0].name;
  compileAndCheck(prog->moduleSource, prog->kernels, "CIN + Add on nvrtc.cin");
}

TEST(CudaCodegenPrecision, CinChunkingAndLanes) {
  // Chunks are evened out (no small last GEMM) and stay within the budget;
  // lanes multiply the per-chunk scratch (Z, Y and a cuBLASLt workspace each).
  const Graph base = optimized(rwtest::zoo("xdeepfm"), "greedy");
  Graph g = base;
  auto lt = kernelByName("cublaslt.cin");
  ASSERT_TRUE(lt.isOk());
  for (Node& n : g.mutableNodes()) {
    if (n.op == OpKind::kCIN) n.mir.kernel = *lt, n.mir.math = Precision::kBF16;
  }
  auto prog = cuda::lowerPlan(g, h200());
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  ASSERT_EQ(prog->cins.size(), 3u);
  const cuda::CinGemm& l1 = prog->cins[0];
  const cuda::CinGemm& l2 = prog->cins[1];
  EXPECT_EQ(l1.K(), 484);
  EXPECT_EQ(l1.gemmK(), 488) << "bf16 rows padded to 16 bytes enter the GEMM whole";
  EXPECT_EQ(l2.gemmK(), 4400);
  // 16 x (4400 x 2 + 200 x 4) bytes a sample: 256 MiB holds 1747, so 3 chunks of 1366.
  EXPECT_EQ(l2.chunkRows(4096, cuda::kCinChunkBudget), 1366);
  EXPECT_EQ(l2.chunkRows(4096, size_t{32} << 20), 216);  // 19 chunks evened out
  for (int64_t batch : {1, 7, 301, 4096, 5000}) {
    for (size_t budget : {size_t{1}, size_t{16} << 10, size_t{20} << 20, cuda::kCinChunkBudget}) {
      int64_t rows = l2.chunkRows(batch, budget);
      int64_t chunks = (batch + rows - 1) / rows;
      EXPECT_GE(rows, 1);
      EXPECT_TRUE(rows == 1 || static_cast<size_t>(rows) * l2.bytesPerSample() <= budget) << batch << " " << budget;
      EXPECT_GT(batch - (chunks - 1) * rows, rows - chunks) << "last chunk nearly full: " << batch << " " << budget;
    }
  }
  const size_t one = l2.scratchBytes(4096, size_t{20} << 20, 1, 0);
  const size_t four = l2.scratchBytes(4096, size_t{20} << 20, 4, cuda::kCinLaneWorkspace);
  EXPECT_EQ(four - l2.weightBytes(), 4 * (one - l2.weightBytes() + cuda::kCinLaneWorkspace));
  // K slices: the 200x200 layers in two slices of 100 xk rows (2200 bf16
  // columns, 4400 bytes: aligned, no padding), their own outer-product
  // kernel; layer 1's padded 484 columns have none.
  EXPECT_EQ(l1.sliceH, 0);
  EXPECT_EQ(l1.zSliceKernel, -1);
  EXPECT_EQ(l2.sliceH, 100);
  EXPECT_EQ(l2.slices(), 2);
  EXPECT_EQ(l2.gemmK(true), 2200);
  EXPECT_EQ(l2.zPitch(true), 2200);
  EXPECT_EQ(l2.gemmK(false), 4400);
  ASSERT_GE(l2.zSliceKernel, 0);
  EXPECT_NE(prog->kernels[static_cast<size_t>(l2.zSliceKernel)].name.find("outer product of 100 rows"),
            std::string::npos);
  // A sliced sample's Z is half as wide: 16 x (2200 x 2 + 200 x 4) bytes.
  EXPECT_EQ(l2.bytesPerSample(true), 16u * (2200 * 2 + 200 * 4));
  EXPECT_LT(l2.scratchBytes(256, cuda::kCinChunkBudget, 1, 0, true), l2.scratchBytes(256, cuda::kCinChunkBudget));
  checkLaunches(g, prog->kernels);
  compileAndCheck(prog->moduleSource, prog->kernels, "xdeepfm cublaslt.cin bf16 with K slices");
}

TEST(CudaCodegenPrecision, CinSliceRowsKeepSlicesAlignedAndUnpadded) {
  EXPECT_EQ(cuda::sliceRows(200, 22, 4400, 2), 100);  // bf16: 2 x 2200 columns
  EXPECT_EQ(cuda::sliceRows(200, 22, 4400, 4), 100);  // f32: 8800 bytes a slice
  EXPECT_EQ(cuda::sliceRows(22, 22, 488, 2), 0);      // padded Z: a slice's W would read the next's columns
  EXPECT_EQ(cuda::sliceRows(6, 6, 36, 4), 2);         // 3 rows (72 bytes) is not 16-byte aligned; 2 (48) is
  EXPECT_EQ(cuda::sliceRows(40, 6, 240, 2), 20);      // the GPU test's second layer
  EXPECT_EQ(cuda::sliceRows(7, 4, 28, 4), 0);         // 7 rows split no way into equal slices
  EXPECT_EQ(cuda::sliceRows(1, 16, 16, 4), 0);        // one row: nothing to slice
}

TEST(CudaCodegenPrecision, GeneratedGemmsWithEpiloguesCompile) {
  // Every GEMM group of dcnv2's greedy plan on nvrtc.gemm_small, the first
  // with bf16 math (operands rounded like the reference), the others f32.
  Graph g = optimized(rwtest::zoo("dcnv2"), "greedy");
  KernelId small = *kernelByName("nvrtc.gemm_small");
  bool first = true;
  for (Node& n : g.mutableNodes()) {
    if (n.op != OpKind::kGemm) continue;
    n.mir.math = first ? Precision::kBF16 : Precision::kF32;
    first = false;
    int32_t label = n.mir.group;
    for (Node& m : g.mutableNodes()) {
      if (&m == &n || (label >= 0 && m.mir.group == label)) m.mir.kernel = small;
    }
  }
  auto prog = cuda::lowerPlan(g, h200());
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  int gemms = 0;
  for (const auto& k : prog->kernels) gemms += k.name.rfind("nvrtc.gemm_small", 0) == 0 ? 1 : 0;
  EXPECT_EQ(gemms, 6);
  compileAndCheck(prog->moduleSource, prog->kernels, "dcnv2 gemm_small");
}

// Greedy's H200 plan of `model`, padded as the CUDA backend pads it, with
// the one width it padded (from -> to) and its lowered program.
struct PaddedPlan {
  Graph g;
  cuda::Program prog;
};

std::optional<PaddedPlan> paddedGreedy(const std::string& model, int64_t from, int64_t to) {
  std::vector<PaddedWidth> report;
  auto padded = padGemmDims(optimized(rwtest::zoo(model), "greedy"), h200().hw.matrixUnit.alignElements, &report);
  EXPECT_TRUE(padded.isOk()) << model << ": " << padded.status().message();
  if (!padded.isOk() || report.size() != 1u) {
    ADD_FAILURE() << model << ": " << report.size() << " widths padded, expected one";
    return std::nullopt;
  }
  EXPECT_EQ(report[0].from, from) << model;
  EXPECT_EQ(report[0].to, to) << model;
  auto prog = cuda::lowerPlan(*padded, h200());
  EXPECT_TRUE(prog.isOk()) << model << ": " << prog.status().message();
  if (!prog.isOk()) return std::nullopt;
  return PaddedPlan{std::move(*padded), std::move(*prog)};
}

TEST(CudaCodegenPrecision, DcnV2TensorCoreWidthsArePaddedAndEltwiseIsVectorized) {
  // Greedy for the H200 runs DCN-v2's cross GEMMs in bf16 on 429 features:
  // the backend widens them to 432 (lower/pad_gemm_dims.h), so every
  // cuBLASLt operand row is 16-byte aligned.
  auto p = paddedGreedy("dcnv2", 429, 432);
  ASSERT_TRUE(p.has_value());
  int gemms = 0;
  for (const cuda::LibraryGemm& lg : p->prog.gemms) {
    const auto& a = p->g.type(lg.anchor.a).dims;
    EXPECT_EQ(a.back() % 8, 0) << p->g.value(lg.anchor.a).name;
    gemms += a.back() == 432 ? 1 : 0;
  }
  EXPECT_EQ(gemms, 4);  // the three cross layers and the first DNN layer read x0 / x_l
  auto m = cuda::compileModule(p->prog.moduleSource, options());
  ASSERT_TRUE(m.isOk()) << m.status().message();
  // The cross layers' x0 * y + x_l kernels load and store whole float4s.
  EXPECT_NE(p->prog.moduleSource.find("cagr_ld4("), std::string::npos);
  EXPECT_NE(m->ptx.find("ld.global.nc.v4.f32"), std::string::npos);
  EXPECT_NE(m->ptx.find("st.global.v4.f32"), std::string::npos);
}

TEST(CudaCodegenPrecision, DlrmInteractionRowIsPaddedForTheTopMlp) {
  // DLRM-Criteo's fused interaction writes [B, 16 + 351] for the first top
  // layer (tensor cores in greedy's plan): padded to 368, the kernel writes
  // the zero column with the row.
  auto p = paddedGreedy("dlrm_criteo", 367, 368);
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(p->prog.moduleSource.find("+ 367 + j] = 0.f;"), std::string::npos);
}

// ---- hand-built groups: the patterns the zoo plans do not reach ----

using rectest::Builder;

struct Generated {
  std::string src = cuda::moduleHeader();
  std::vector<cuda::GeneratedKernel> kernels;
};

// Generates every group of `g` the way the runtime would hand it over
// (lone views and library GEMMs aside); fails the test on an error.
Generated generateAll(const Graph& g) {
  Generated out;
  ValueUses uses = valueUses(g);
  auto order = scheduleKernels(g);
  EXPECT_TRUE(order.isOk()) << order.status().message();
  for (const auto& members : *order) {
    auto shape = classifyGroup(g, members);
    EXPECT_TRUE(shape.isOk()) << shape.status().message();
    if (!shape.isOk()) continue;
    const Node& a = g.node(shape->anchor);
    if (isAliasGroup(g, members)) continue;
    if (shape->pattern == Pattern::kGemm && kernelInfo(a.mir.kernel).name != std::string("nvrtc.gemm_small")) continue;
    cuda::CodegenRequest r{g, members, *shape, a.mir.kernel, groupOutputs(g, uses, members)};
    auto k = cuda::generateKernel(r, out.src);
    EXPECT_TRUE(k.isOk()) << k.status().message();
    if (k.isOk()) out.kernels.push_back(std::move(*k));
  }
  return out;
}

const cuda::GeneratedKernel* byName(const Generated& gen, const std::string& prefix) {
  for (const auto& k : gen.kernels) {
    if (k.name.rfind(prefix, 0) == 0) return &k;
  }
  ADD_FAILURE() << "no kernel named " << prefix << "...";
  return nullptr;
}

TEST(CudaCodegenPatterns, LookupsReductionsAndMovementCompile) {
  Builder b;
  int L = b.g.addSymbol("L");
  ValueId ids = b.input("ids", DType::kI64, {3, symDim(L)});
  ValueId off = b.input("off", DType::kI64, {3, kBatch});
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 13});
  std::vector<ValueId> in;
  for (int t = 0; t < 4; ++t)
    in.push_back(b.table("t" + std::to_string(t), 50, 16, 10 + t, t == 3 ? Precision::kBF16 : Precision::kF32));
  in.push_back(ids);
  in.push_back(off);
  ValueId tbe = b.op(
      OpKind::kEmbeddingBags, in, "tbe",
      attrs({{"num_tables", int64_t{4}}, {"mode", std::string("mean")}, {"slots", std::vector<int64_t>{0, 1, 2, 0}}}));
  ValueId scale = b.constant("scale", {64}, 3);
  ValueId act = b.op(OpKind::kRelu, {b.op(OpKind::kMul, {tbe, scale}, "mul")}, "relu");
  ValueId cat = b.op(OpKind::kConcat, {dense, act}, "cat", attrs({{"axis", int64_t{1}}}));
  b.group({"tbe", "mul", "relu"}, 0, "nvrtc.embedding");
  // A weighted, include_last_offset EmbeddingBag and a reduction / softmax / layer norm chain.
  ValueId lids = b.input("lids", DType::kI64, {symDim(L)});
  ValueId x3 = b.op(OpKind::kReshape, {cat}, "r3", attrs({{"shape", std::vector<int64_t>{0, 7, 11}}}));
  ValueId sm = b.op(OpKind::kSoftmax, {x3}, "softmax", attrs({{"axis", int64_t{1}}}));
  ValueId ln = b.op(OpKind::kLayerNorm, {sm, b.constant("lnw", {11}, 4), b.constant("lnb", {11}, 5)}, "ln");
  ValueId mx = b.op(OpKind::kReduceMax, {b.op(OpKind::kExp, {ln}, "exp")}, "rmax",
                    attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}));
  b.group({"exp", "rmax"}, 1, "nvrtc.reduce");
  ValueId tr = b.op(OpKind::kTranspose, {ln}, "tr", attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  ValueId sl = b.op(OpKind::kSlice, {tr}, "slice",
                    attrs({{"starts", std::vector<int64_t>{1}},
                           {"ends", std::vector<int64_t>{-1}},
                           {"axes", std::vector<int64_t>{1}},
                           {"steps", std::vector<int64_t>{2}}}));
  auto pieces = b.g.addNode(OpKind::kSplit, {sl}, attrs({{"axis", int64_t{2}}, {"split", std::vector<int64_t>{3, 4}}}),
                            "split", 2);
  ASSERT_TRUE(pieces.isOk()) << pieces.status().message();
  ValueId ex = b.op(OpKind::kExpand, {b.constant("row", {1, 1, 4}, 6)}, "expand",
                    attrs({{"shape", std::vector<int64_t>{1, 5, 4}}}));
  ValueId sum = b.op(OpKind::kAdd, {(*pieces)[1], ex}, "add");
  ValueId g2 = b.op(OpKind::kGather, {mx, b.g.addConstant("cols", rectest::ids({2}, {-1, 3}))}, "gather",
                    attrs({{"axis", int64_t{1}}}));
  ValueId eb = b.op(OpKind::kEmbeddingBag, {b.table("tw", 40, 6, 7), lids, b.input("loff", DType::kI64, {kBatch})},
                    "bag", attrs({{"mode", std::string("max")}}));
  // A generated GEMM whose epilogue is no chain: sigmoid(gate) does not
  // depend on the product, is written too ([N, 1], by one element per row)
  // and scales the biased product.
  ValueId gemm = b.op(OpKind::kGemm, {dense, b.constant("w", {8, 13}, 11)}, "gemm", attrs({{"transB", int64_t{1}}}));
  ValueId biased = b.op(OpKind::kAdd, {gemm, b.constant("b8", {8}, 12)}, "bias");
  ValueId gate = b.op(OpKind::kSigmoid, {b.input("gate", DType::kF32, {kBatch, 1})}, "gate_act");
  ValueId scaled = b.op(OpKind::kMul, {biased, gate}, "scaled");
  b.group({"gemm", "bias", "gate_act", "scaled"}, 2, "nvrtc.gemm_small");
  // BatchNorm over channel axis 1, Cast of ids, Where on a boolean mask.
  std::vector<ValueId> bn{x3};
  for (int i = 0; i < 4; ++i) bn.push_back(b.constant("bn" + std::to_string(i), {7}, 20 + i));
  ValueId norm = b.op(OpKind::kBatchNorm, bn, "bn");
  ValueId cast = b.op(OpKind::kCast, {lids}, "cast", attrs({{"to", std::string("f32")}}));
  ValueId mask = b.input("mask", DType::kBool, {kBatch, 1});
  ValueId picked = b.op(OpKind::kWhere, {mask, scaled, b.constant("zero", {1}, 24)}, "where");
  for (ValueId v : {sum, g2, eb, (*pieces)[0], scaled, gate, norm, cast, picked}) b.g.addOutput(v);
  ASSERT_TRUE(b.g.verify().isOk()) << b.g.verify().message();
  Generated gen = generateAll(b.g);
  const cuda::GeneratedKernel* gk = byName(gen, "nvrtc.gemm_small");
  ASSERT_NE(gk, nullptr);
  EXPECT_EQ(gk->numOutputs, 2) << gk->name;
  const cuda::GeneratedKernel* lookup = byName(gen, "nvrtc.embedding");
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->name, "nvrtc.embedding[4 tables, multi-hot, mean, f32]+mul+relu");
  // 4 tables of 16 f32 columns: float4 rows, 4 lanes per bag, 64 bags per block of 256.
  for (int64_t n : {1, 100, 4096}) {
    cuda::Launch l = lookup->launch(extentsAt(b.g, *lookup, n));
    EXPECT_GE(int64_t{l.grid[0]} * l.block[0] / 4, 4 * n) << "batch " << n;
    EXPECT_LT(int64_t{l.grid[0] - 1} * l.block[0] / 4, 4 * n) << "batch " << n;
  }
  compileAndCheck(gen.src, gen.kernels, "patterns");
}

TEST(CudaCodegenPatterns, InteractionFmAndCinLaunchRules) {
  Builder b;
  ValueId x = b.input("x", DType::kI64, {kBatch, 5});
  std::vector<ValueId> in;
  for (int t = 0; t < 5; ++t) in.push_back(b.table("t" + std::to_string(t), 30, 16, 20 + t, Precision::kInt8Rowwise));
  in.push_back(x);
  ValueId tbe = b.op(OpKind::kEmbeddingBags, in, "tbe", attrs({{"num_tables", int64_t{5}}}));
  ValueId dense = b.input("dense", DType::kF32, {kBatch, 16});
  ValueId cat = b.op(OpKind::kConcat, {dense, tbe}, "cat", attrs({{"axis", int64_t{1}}}));
  ValueId x3 = b.op(OpKind::kReshape, {cat}, "r", attrs({{"shape", std::vector<int64_t>{-1, 6, 16}}}));
  ValueId it = b.op(OpKind::kInteraction, {x3}, "inter", attrs({{"self_interaction", int64_t{1}}}));
  ValueId out = b.op(OpKind::kConcat, {dense, it}, "out", attrs({{"axis", int64_t{1}}}));
  b.group({"tbe", "cat", "r", "inter", "out"}, 0, "nvrtc.interaction");
  ValueId fm = b.op(OpKind::kFM, {x3}, "fm", attrs({{"reduce", int64_t{0}}}));
  ValueId cin = b.op(OpKind::kCIN, {x3, x3, b.constant("w", {40, 36}, 8), b.constant("bias", {40}, 9)}, "cin");
  for (ValueId v : {out, fm, cin}) b.g.addOutput(v);
  ASSERT_TRUE(b.g.verify().isOk()) << b.g.verify().message();
  Generated gen = generateAll(b.g);
  const cuda::GeneratedKernel* inter = byName(gen, "nvrtc.interaction");
  const cuda::GeneratedKernel* c = byName(gen, "nvrtc.cin");
  ASSERT_TRUE(inter != nullptr && c != nullptr);
  for (int64_t n : {1, 77, 4096}) {
    cuda::Launch li = inter->launch(extentsAt(b.g, *inter, n));
    EXPECT_GE(int64_t{li.grid[0]} * li.block[0] / 32, n) << "one warp per sample, batch " << n;
    cuda::Launch lc = c->launch(extentsAt(b.g, *c, n));
    // O = 40 fits one 40-row tile (5 x 8 threads down, 32 across, 8 columns each).
    EXPECT_EQ(lc.grid[1], 1u);
    EXPECT_GE(int64_t{lc.grid[0]} * 8 * 32, n * 16) << "columns b*D covered at batch " << n;
  }
  compileAndCheck(gen.src, gen.kernels, "rec");
}

TEST(CudaCodegenPatterns, UnsupportedGroupsNameTheNode) {
  Builder b;
  ValueId x = b.input("x", DType::kF32, {kBatch, 4, 5});
  b.op(OpKind::kReduceSum, {x}, "strided_sum", attrs({{"axes", std::vector<int64_t>{0, 2}}}));
  b.g.addOutput(b.g.nodes().back().outputs[0]);
  std::string src = cuda::moduleHeader();
  cuda::CodegenRequest r{b.g, {0}, *classifyGroup(b.g, {0}), 0, {b.g.nodes()[0].outputs[0]}};
  auto k = cuda::generateKernel(r, src);
  ASSERT_FALSE(k.isOk());
  EXPECT_EQ(k.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(k.status().message().find("strided_sum"), std::string::npos) << k.status().message();
  EXPECT_EQ(src, cuda::moduleHeader()) << "a refused group leaves the module as it was";
}

// ---- NVRTC ----

TEST(CudaNvrtc, SecondCompileComesFromTheCacheAndCorruptEntriesAreRecompiled) {
  std::string src = cuda::moduleHeader() +
                    "extern \"C\" __global__ void k(const float* x, float* y, long long n) {\n"
                    "  for (long long i = threadIdx.x; i < n; i += blockDim.x) y[i] = cagr_sigmoid(x[i]);\n}\n";
  auto first = cuda::compileModule(src, options());
  ASSERT_TRUE(first.isOk()) << first.status().message();
  EXPECT_FALSE(first->fromCache);
  EXPECT_GT(first->compileSeconds, 0.0);
  auto second = cuda::compileModule(src, options());
  ASSERT_TRUE(second.isOk());
  EXPECT_TRUE(second->fromCache);
  EXPECT_EQ(second->ptx, first->ptx);
  EXPECT_EQ(second->cubin, first->cubin);
  // Corrupt every entry of the cache (one byte in the payload, then a truncation).
  for (int round = 0; round < 2; ++round) {
    for (const auto& e : fs::recursive_directory_iterator(cacheDir())) {
      if (!e.is_regular_file()) continue;
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      if (round == 0) {
        f.seekp(static_cast<std::streamoff>(fs::file_size(e.path()) / 2));
        f.put('\x5a');
      } else {
        f.close();
        fs::resize_file(e.path(), fs::file_size(e.path()) / 3);
      }
    }
    auto again = cuda::compileModule(src, options());
    ASSERT_TRUE(again.isOk()) << again.status().message();
    EXPECT_FALSE(again->fromCache) << "round " << round;
    EXPECT_EQ(again->cubin, first->cubin);
  }
  auto ptxOnly = cuda::compileModule(src, options("compute_90a"));
  ASSERT_TRUE(ptxOnly.isOk()) << ptxOnly.status().message();
  EXPECT_TRUE(ptxOnly->cubin.empty());
  EXPECT_FALSE(ptxOnly->ptx.empty());
}

TEST(CudaNvrtc, ErrorsCarryTheLogAndQuoteTheLine) {
  std::string src =
      cuda::moduleHeader() + "extern \"C\" __global__ void broken(float* y) {\n  y[0] = undeclared_thing;\n}\n";
  auto m = cuda::compileModule(src, options());
  ASSERT_FALSE(m.isOk());
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("undeclared_thing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("|   y[0] = undeclared_thing;"), std::string::npos) << msg;
  auto bad = cuda::compileModule(src, options("sm90"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("sm90"), std::string::npos);
}

}  // namespace
}  // namespace cagr

#endif  // CAGR_HAVE_CUDA
