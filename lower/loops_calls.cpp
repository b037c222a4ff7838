// Statements run by a library call: the call is a leaf of the loop tree,
// with the loops of the statements it runs around it (a GEMM's pack
// statements, the copies around its calls and its fallback; a convolution's
// start, added after the call).
#include "ir/affine.h"
#include "lower/loop_builder.h"

namespace tenet::lower::detail {

void LoopBuilder::gemm(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  const GemmLowering& g = lowered_.gemms.at(&s);
  Node call;
  call.kind = NodeKind::Call;
  call.call = CallKind::Gemm;
  call.stmt = &s;
  auto nested = [&](const ir::Stmt& part) {
    Block& block = call.nested[&part];
    Cursor in(block);
    loop_nest(in, part, ctx);
  };
  for (const std::vector<ir::Stmt>* parts : {&g.before_chunks, &g.before, &g.after})
    for (const ir::Stmt& part : *parts) {
      if (g.plan.split && g.scatter && &part == &g.after.back()) {
        Cursor in(call.nested[&part]);  // a split's gather as col2im
        col2im(in, part, *g.scatter, ctx);
      } else {
        nested(part);
      }
    }
  if (s.annotations.gemm->per_call_min_work != 0) nested(s);  // the loops when it is small
  out.add(std::move(call));
}

void LoopBuilder::conv(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  (void)ctx;
  const ir::Compute& c = s.compute;
  Node call;
  call.kind = NodeKind::Call;
  call.call = CallKind::Conv;
  call.stmt = &s;
  if (lowered_.convs.at(&s).start) {
    // The sum starts from a tensor: added to the library's sum, element by element.
    Block& block = call.nested[&s];
    Cursor in(block);
    in.note("The sum starts from " + c.init->name + ": added to the library's sum.");
    Node names;
    names.kind = NodeKind::NameScope;
    names.members = {&c};
    for (const ir::Dim& d : c.out) {
      names.bindings.push_back(Binding{d.index, fresh(d.index), d.lo, d.hi});
      names.declares.push_back(names.bindings.back().var);
    }
    const std::vector<Binding> bindings = names.bindings;
    in.open(std::move(names));
    for (size_t d = 0; d < c.out.size(); ++d) {
      std::optional<ParallelWork> work;
      if (d == 0 && options_.parallel) {
        work = ParallelWork{};
        work->min_work = options_.parallel_min_work;
        work->constant = work->min_work;  // always: a convolution's output is large
        work->collapse = 2;
      }
      in.open(for_node(bindings[d].var, ix::constant(0), ix::extent(c.result.get(), int(d)), work));
    }
    Node add;
    add.kind = NodeKind::Assign;
    add.target.tensor = c.result.get();
    add.target.indices = ir::plain_indices(c.out);
    add.source.kind = Operand::Load;
    add.source.place.tensor = c.init.get();
    add.source.place.indices = add.target.indices;
    add.op = ir::ReduceOp::Sum;
    add.compute = compute_type(c.result->type);
    in.add(std::move(add));
    in.close(c.out.size() + 1);
  }
  out.add(std::move(call));
}

}  // namespace tenet::lower::detail
