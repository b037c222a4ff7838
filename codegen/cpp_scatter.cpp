// Sums run as scatters (lower/scatter.h): the result starts from init (or 0),
// then every contribution adds into the element its computed index selects.
// Threads split the first free out index into blocks of columns; each thread
// walks every contribution, in the reduce indices' order, for its own
// columns, so every element sums its terms in the loop nest's order. Out
// indices a target mentions (outer) loop outside the contributions, and
// threads split the first of them instead: each slice has its own elements.
#include <map>
#include <optional>

#include "codegen/function_emitter.h"
#include "ir/affine.h"
#include "ir/printer.h"
#include "lower/loop_bounds.h"

namespace tenet::codegen::detail {

namespace {

/// Columns of the first free out index per block of a scatter's work: two
/// cache lines of floats, so that a block's rows are whole lines.
constexpr int64_t kScatterBlock = 32;

std::string for_loop(const std::string& var, const std::string& lo, const std::string& hi) {
  return "for (int64_t " + var + " = " + lo + "; " + var + " < " + hi + "; ++" + var + ")";
}

}  // namespace

void FunctionEmitter::emit_scatter(Code& code, const ir::Stmt& s,
                                   const lower::IndexScatter& lowered, const Scope& scope) {
  const ir::Compute& c = s.compute;
  // Reduce loops narrowed by the mask's other conditions where they can be
  // (a ragged range: k in start(b):end(b)), as for any reduction.
  std::vector<std::string> loop_order;
  lower::IndexRanges ranges;
  for (const auto& [index, info] : scope.indices)
    ranges[index] = lower::IndexRange{info.lo, info.hi};
  for (size_t d : lowered.outer) loop_order.push_back(c.out[d].index);
  for (const ir::Dim& d : c.reduce) loop_order.push_back(d.index);
  for (size_t d : lowered.free) loop_order.push_back(c.out[d].index);
  for (const auto* dims : {&c.out, &c.reduce})
    for (const ir::Dim& d : *dims) ranges[d.index] = lower::IndexRange{d.lo, d.hi};
  const lower::GuardBounds guard = lower::infer_guard_bounds(c, loop_order, ranges);
  ir::Compute narrowed = c;
  narrowed.body = guard.body;
  const std::optional<lower::IndexScatter> rest = lower::index_scatter(narrowed);
  const lower::IndexScatter& form = rest ? *rest : lowered;
  const TensorAccess& result = access(c.result);
  code.comment(comment_text(s));
  std::string order;
  for (const ir::Dim& d : c.reduce) order += (order.empty() ? "" : ", ") + d.index;
  code.note(
      "As a scatter: each term adds into the element its index selects; every element "
      "sums its terms in the order of " +
      order + ", on any number of threads.");
  Namer local = statement_namer(c, scope);
  Scope inner = scope;
  inner.statement = c.result->name;

  // The start: init, or 0.
  std::vector<std::string> out_vars;
  for (const ir::Dim& d : c.out) {
    out_vars.push_back(local.take(d.index));
    inner.bind(d.index, out_vars.back(), d.lo, d.hi);
  }
  const std::vector<ir::Affine> position = ir::plain_indices(c.out);
  const std::string target = result.pointer + "[" + flat_offset(result, position, inner) + "]";
  std::string start = reduce_identity(c.op, c.result->type);
  if (c.init) {
    const TensorAccess& init = access(c.init);
    start = init.pointer + "[" + flat_offset(init, position, inner) + "]";
  }
  std::string count;
  for (size_t d = 0; d < c.out.size(); ++d) count += (d ? " * " : "") + result.dims[d];
  code.line("#pragma omp parallel for if (" + count +
            " >= " + std::to_string(options_.parallel_min_work) + ")");
  for (size_t d = 0; d < c.out.size(); ++d) code.open(for_loop(out_vars[d], "0", result.dims[d]));
  code.line(target + " = " + start + ";");
  for (size_t d = 0; d < c.out.size(); ++d) code.close();

  // The contributions.
  std::string work;
  for (const ir::Dim& d : c.reduce)
    work += (work.empty() ? "" : " * ") +
            wrap(size_to_c(d.hi - d.lo, size_names_), kPrecMultiplicative + 1);
  for (size_t d : form.outer) work += " * " + result.dims[d];
  for (size_t d : form.free) work += " * " + result.dims[d];
  const std::string parallel = "#pragma omp parallel for if (" + work +
                               " >= " + std::to_string(options_.parallel_min_work) + ")";
  for (size_t k = 0; k < form.outer.size(); ++k) {
    const size_t d = form.outer[k];
    if (k == 0) code.line(parallel);
    code.open(for_loop(out_vars[d], "0", result.dims[d]));
  }
  const bool blocked = form.outer.empty() && !form.free.empty();
  std::string block, block_end;
  if (blocked) {
    const size_t first = form.free[0];
    block = local.take(c.out[first].index + "_block");
    code.line(parallel);
    code.open("for (int64_t " + block + " = 0; " + block + " < " + result.dims[first] + "; " +
              block + " += " + std::to_string(kScatterBlock) + ")");
    block_end = local.take(c.out[first].index + "_end");
    code.line("const int64_t " + block_end + " = std::min<int64_t>(" + block + " + " +
              std::to_string(kScatterBlock) + ", " + result.dims[first] + ");");
  }
  std::vector<std::string> reduce_vars;
  for (size_t r = 0; r < c.reduce.size(); ++r) {
    const ir::Dim& d = c.reduce[r];
    reduce_vars.push_back(local.take(d.index));
    inner.bind(d.index, reduce_vars.back(), d.lo, d.hi);
    const lower::ReduceRange& range = rest ? guard.reduce[r] : lower::ReduceRange{};
    if (range.narrowed())
      code.open("for (int64_t " + reduce_vars.back() + " = " +
                index_text(lower::loop_start(d, range, ranges), inner).text + "; " +
                reduce_vars.back() + " < " +
                index_text(lower::loop_end(d, range, ranges), inner).text + "; ++" +
                reduce_vars.back() + ")");
    else
      code.open(for_loop(reduce_vars.back(), size_to_c(d.lo, size_names_).text,
                         size_to_c(d.hi, size_names_).text));
  }
  for (const lower::ScatterTarget& t : form.targets) {
    const std::string& var = out_vars[t.dim];
    code.line("const int64_t " + var + " = " + emit_expr(t.index, inner).text + ";");
    code.line("if (!tenet::in_bounds(" + var + ", " + result.dims[t.dim] +
              ")) continue;  // no element: the mask never holds");
  }
  for (size_t k = 0; k < form.free.size(); ++k) {
    const size_t d = form.free[k];
    // The innermost loop adds one contribution to distinct elements: no
    // dependence between its iterations (the outlined parallel region would
    // otherwise hide that the result and the operands do not overlap).
    if (k + 1 == form.free.size() && options_.openmp) code.line("#pragma omp simd");
    if (k == 0 && blocked)
      code.open(for_loop(out_vars[d], block, block_end));
    else
      code.open(for_loop(out_vars[d], "0", result.dims[d]));
  }
  const std::string step = reduce_step(c.op, c.result->type, target, emit_expr(form.value, inner));
  if (form.condition) {
    code.line("if (" + emit_expr(form.condition, inner).text + ")");
    code.line("  " + step);
  } else {
    code.line(step);
  }
  for (size_t k = 0; k < form.outer.size() + c.reduce.size() + form.free.size(); ++k) code.close();
  if (blocked) code.close();
}

}  // namespace tenet::codegen::detail
