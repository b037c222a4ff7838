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
    Block& block = call.add_nested(&part);
    Cursor in(block);
    loop_nest(in, part, ctx);
  };
  for (const std::vector<ir::Stmt>* parts : {&g.before_chunks, &g.before, &g.after})
    for (const ir::Stmt& part : *parts) {
      if (g.plan.split && g.scatter && &part == &g.after.back()) {
        Cursor in(call.add_nested(&part));  // a split's gather as col2im
        col2im(in, part, *g.scatter, ctx);
      } else {
        nested(part);
      }
    }
  if (s.annotations.gemm->per_call_min_work != 0) nested(s);  // the loops when it is small
  Cursor in(call.body);
  gemm_calls(in, s, g);
  out.add(std::move(call));
}

namespace {

/// The product of the dims' extents: the symbolic ones in order, then the constant.
IndexExpr product_of(const std::vector<ir::Dim>& dims) {
  IndexExpr product;
  int64_t constant = 1;
  for (const ir::Dim& d : dims) {
    const ir::SizeExpr extent = d.extent();
    if (auto k = extent.constant()) {
      constant *= *k;
      continue;
    }
    product = product ? ix::binary(IndexKind::Mul, product, ix::size(extent)) : ix::size(extent);
  }
  if (!product) return ix::constant(constant);
  return constant == 1 ? product : ix::binary(IndexKind::Mul, product, ix::constant(constant));
}

}  // namespace

void LoopBuilder::gemm_calls(Cursor& out, const ir::Stmt& s, const GemmLowering& g) {
  // One call per value of the plan's loop indices: small GEMMs one per
  // thread (the library runs single-threaded inside a parallel region),
  // large ones one after the other, each threaded by the library.
  const ir::GemmPlan& p = g.plan;
  Node names;
  names.kind = NodeKind::NameScope;
  names.members = {&g.product()};
  for (const ir::Dim& d : p.loops) {
    names.bindings.push_back(Binding{d.index, fresh(d.index), d.lo, d.hi});
    names.declares.push_back(names.bindings.back().var);
  }
  const std::vector<Var> sizes = {fresh("gemm_m", true), fresh("gemm_n", true),
                                  fresh("gemm_k", true)};
  for (const Var& v : sizes) names.declares.push_back(v);
  const std::vector<Binding> loops = names.bindings;
  out.open(std::move(names));
  Node scope;
  scope.kind = NodeKind::Scope;
  out.open(std::move(scope));
  Node let = let_index(sizes[0], product_of(p.m));
  let.more = {{sizes[1], product_of(p.n)}, {sizes[2], product_of(p.k)}};
  out.add(std::move(let));
  std::optional<ParallelWork> work;
  if (!p.loops.empty() && options_.parallel) {
    std::string list;
    for (const ir::Dim& d : p.loops) list += (list.empty() ? "" : ", ") + d.index;
    out.note("One GEMM per " + list +
             "; small ones in parallel, large ones threaded by the library.");
    work = ParallelWork{};
    work->min_work = kThreadedGemmWork;
    work->literal = work->below = true;
    ParallelWork::Term term;
    for (const Var& v : sizes) term.factors.push_back({ix::var(v)});
    work->terms.push_back(std::move(term));
    work->scale.push_back({product_of({p.loops[0]})});
  }
  for (size_t i = 0; i < loops.size(); ++i)
    out.open(for_node(loops[i].var, ix::constant(0), product_of({p.loops[i]}),
                      i == 0 ? work : std::nullopt));
  Node call;
  call.kind = NodeKind::Call;
  call.call = CallKind::GemmCall;
  call.stmt = &s;
  call.sizes = sizes;
  out.add(std::move(call));
  out.close(loops.size() + 2);
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
    Block& block = call.add_nested(&s);
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
