// A max, min or float32 sum reduction in vector lanes (passes/schedule.h, 4):
// its last reduce loop by blocks of partial accumulators, combined at the end.
#include <string>

#include "codegen/function_emitter.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_lanes(Code& code, const Scheduled& m, const std::string& acc,
                                 const std::vector<std::string>& reduce_vars, Namer& local,
                                 const Scope& scope, const std::pair<std::string, CExpr>& last,
                                 const std::function<void(size_t)>& open_loops) {
  const ir::Compute& c = m.stmt->compute;
  const ElemType computed = compute_type(c.result->type);
  const bool sum = c.op == ir::ReduceOp::Sum;  // a float32 sum: lanes of doubles
  const std::string lane_type = sum ? "double" : std::string(c_type_name(computed));
  const size_t outer = c.reduce.size() - 1;  // reduce loops around the lanes
  const std::string n = std::to_string(m.schedule.lanes);
  const std::string& index = c.reduce.back().index;
  const std::string& var = reduce_vars.back();
  const std::string lanes = local.take(index + "_lanes"), lane = local.take(index + "_lane");
  const std::string first = local.take(index + "_first"), end = local.take(index + "_end");
  const std::string split = local.take(index + "_split"), block = local.take(index + "_block");
  const CExpr term = emit_expr(m.guard.body, scope);
  if (sum)
    code.note("In " + n +
              " lanes of partial sums in double, added in the language's order "
              "(tenet::sum_lanes); the lanes are contiguous loads.");
  else
    code.note("In " + n +
              " lanes: max and min give the same bits in any order (maximumNumber), and the "
              "lanes are contiguous loads.");
  code.open("");  // a block: siblings in a nest may have lanes of their own
  code.line(lane_type + " " + lanes + "[" + n + "];");
  code.line("#pragma GCC unroll " + n);
  code.open("for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane + ")");
  code.line(lanes + "[" + lane + "] = " + (sum ? "0.0" : reduce_identity(c.op, computed)) + ";");
  code.close();
  open_loops(outer);
  code.line("const int64_t " + first + " = " + last.first + ", " + end + " = " + last.second.text +
            ";");
  code.line("const int64_t " + split + " = " + first + " + std::max<int64_t>(0, " + end + " - " +
            first + ") / " + n + " * " + n + ";");
  code.open("for (int64_t " + block + " = " + first + "; " + block + " < " + split + "; " + block +
            " += " + n + ")");
  // Left to the loop vectoriser (not unrolled): it turns the compare-and-blend
  // of math::max into vector masks, which GCC's SLP does not.
  code.open("for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane + ")");
  code.line("const int64_t " + var + " = " + block + " + " + lane + ";");
  code.line(reduce_step(c.op, computed, lanes + "[" + lane + "]", term));
  code.close();
  code.close();
  code.open("for (int64_t " + var + " = " + split + "; " + var + " < " + end + "; ++" + var + ")");
  code.line(reduce_step(c.op, computed, acc, term));
  code.close();
  for (size_t k = 0; k < outer; ++k) code.close();
  const std::string fold = sum ? "tenet::sum_lanes<" + n + ">(" + lanes + ")"
                               : std::string("tenet::fold_lanes<") +
                                     (c.op == ir::ReduceOp::Max ? "true" : "false") + ", " + n +
                                     ">(" + lanes + ")";
  code.line(reduce_step(c.op, computed, acc, CExpr{fold, kPrecPrimary}));
  code.close();
}

}  // namespace tenet::codegen::detail
