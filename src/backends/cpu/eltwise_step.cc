// The CPU eltwise step factory: fused elementwise groups (Pattern::kEltwise,
// incl. single elementwise nodes and views) run as one tiled pass of an
// EltwiseProgram (eltwise_program.h) writing only the group's outputs;
// reductions with their prologue go to eltwise_reduce.cc, single
// data-movement nodes to eltwise_movement.cc. Everything else — GEMMs,
// lookups with a tail, rec ops — is declined with the reason.
#include "backends/cpu/eltwise_program.h"
#include "backends/cpu/eltwise_steps.h"

namespace cagr::cpu {
namespace {

class EltwiseStep : public Step {
 public:
  EltwiseStep(std::unique_ptr<EltwiseProgram> prog, std::vector<ValueId> outputs)
      : prog_(std::move(prog)), outputs_(std::move(outputs)) {}

  std::string kernelName() const override { return "own.eltwise:" + prog_->opNames(); }
  std::vector<ValueId> writes() const override { return outputs_; }
  Status run(const RunContext& ctx) const override { return prog_->run(ctx); }

 private:
  std::unique_ptr<EltwiseProgram> prog_;
  std::vector<ValueId> outputs_;
};

StatusOr<std::unique_ptr<Step>> makeFusedStep(const StepRequest& r) {
  CAGR_ASSIGN_OR_RETURN(std::unique_ptr<EltwiseProgram> prog, EltwiseProgram::build(r.g, r.members, r.outputs));
  return std::unique_ptr<Step>(std::make_unique<EltwiseStep>(std::move(prog), r.outputs));
}

}  // namespace

StatusOr<std::unique_ptr<Step>> makeEltwiseStep(const StepRequest& r) {
  switch (r.shape.pattern) {
    case Pattern::kEltwise:
      return makeFusedStep(r);
    case Pattern::kReduce:
      return makeReduceGroupStep(r);
    case Pattern::kSingle:
    case Pattern::kGather:
    case Pattern::kConcatInPlace:
      if (r.members.size() == 1) return makeMovementStep(r);
      break;
    default:
      break;
  }
  return unsupported(std::string("own.eltwise does not run a ") + patternName(r.shape.pattern) + " group");
}

}  // namespace cagr::cpu
