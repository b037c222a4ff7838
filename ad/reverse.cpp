#include "ad/reverse.h"

#include <cctype>
#include <map>
#include <set>

#include "ad/body_adjoint.h"
#include "ad/expr_util.h"
#include "ad/gather.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/reshape.h"
#include "support/error.h"

namespace tenet::ad {

using ir::Affine;
using ir::BinOp;
using ir::Dim;
using ir::Expr;
using ir::ReduceOp;
using ir::ValuePtr;

namespace {

/// Longer forward sources are shortened in the comments of backward statements.
constexpr size_t kMaxBackwardSource = 200;

Expr i64(int64_t v) {
  return constant(double(v), ElemType::I64);
}
Expr i64(const ir::SizeExpr& s) {
  if (auto k = s.constant()) return i64(*k);
  return ir::make_size(s);
}

// The row-major position of a point of the reduce domain, and the domain's size.
Expr linear_position(const std::vector<Dim>& reduce) {
  Expr pos;
  for (const Dim& d : reduce) {
    Expr offset = ir::affine_value(Affine::var(d.index) - ir::affine_const(d.lo));
    if (!pos) {
      pos = offset;
    } else {
      Expr extent = i64(d.extent());
      pos = ir::make_binary(BinOp::Add, ir::make_binary(BinOp::Mul, pos, extent), offset);
    }
  }
  return pos ? pos : i64(0);
}

ir::SizeExpr domain_size(const std::vector<Dim>& reduce) {
  ir::SizeExpr n = 1;
  for (const Dim& d : reduce) n = n * d.extent();
  return n;
}

// The point of the reduce domain at row-major position `at` (linear_position's
// inverse): each index its value, lo + at / (the extents after it) % extent.
// Every value is in its index's range, also at = domain_size (no term won).
std::map<std::string, Expr> reduce_point(const std::vector<Dim>& reduce, const Expr& at) {
  std::map<std::string, Expr> point;
  ir::SizeExpr stride = 1;
  for (size_t k = reduce.size(); k-- > 0;) {
    const Dim& d = reduce[k];
    Expr v = stride == ir::SizeExpr(1) ? at : ir::make_binary(BinOp::Div, at, i64(stride));
    v = ir::make_binary(BinOp::Rem, v, i64(d.extent()));
    if (!(d.lo == ir::SizeExpr(0))) v = ir::make_binary(BinOp::Add, v, i64(d.lo));
    point[d.index] = v;
    stride = stride * d.extent();
  }
  return point;
}

// `e` with each index of `values` replaced by its value (an int64
// expression); a read whose indices mention one reads there through
// computed indices.
Expr at_values(const Expr& e, const std::map<std::string, Expr>& values) {
  std::set<std::string> names;
  for (const auto& [name, value] : values) names.insert(name);
  return ir::transform(e, [&](const Expr& x) -> Expr {
    if (x->kind == ir::ExprKind::Index) {
      auto it = values.find(x->index);
      return it == values.end() ? nullptr : it->second;
    }
    if (x->kind != ir::ExprKind::Read || !ir::mentions_index(x, names)) return nullptr;
    std::vector<Expr> at;
    for (size_t d = 0; d < x->indices.size(); ++d)
      at.push_back(
          at_values(x->is_computed(d) ? x->computed[d] : ir::affine_value(x->indices[d]), values));
    return ir::make_read_at(x->tensor, std::move(at), x->guarded);
  });
}

// Index dims over a value's shape, named after its size symbols (H -> h).
std::vector<Dim> index_dims(const ir::Value& v) {
  std::vector<Dim> dims;
  std::set<std::string> used;
  for (int m = 0; m < v.rank(); ++m) {
    std::string base = "i" + std::to_string(m);
    if (auto sym = v.shape[m].as_symbol()) {
      base.clear();
      for (char c : *sym) base += char(std::tolower(static_cast<unsigned char>(c)));
    }
    std::string name = base;
    for (int k = 2; used.count(name); ++k) name = base + std::to_string(k);
    used.insert(name);
    dims.push_back(Dim{name, 0, v.shape[m]});
  }
  return dims;
}

struct Adjoint {
  ValuePtr tensor;           // the partial adjoint so far (null: none yet)
  bool one = false;          // a scalar output's seed: the constant 1
  int expected = 0;          // contributions the plan found
  int emitted = 0;           // contributions emitted so far
  bool final_named = false;  // `tensor` is the last contribution's d_<name> statement
};

class Reverse {
 public:
  Reverse(ir::FunctionBuilder& fb, const ForwardCopy& fwd, const std::set<std::string>& taken)
      : fb_(fb), fwd_(fwd), taken_(taken) {}

  std::vector<ValuePtr> run(const std::vector<ValuePtr>& wrt, const std::vector<Seed>& seeds) {
    plan(wrt, seeds);
    for (auto it = fwd_.stmts.rbegin(); it != fwd_.stmts.rend(); ++it) statement(*it);
    std::vector<ValuePtr> grads;
    for (const ValuePtr& x : wrt) grads.push_back(gradient_of(x));
    return grads;
  }

 private:
  bool active(const ir::Value& v) const { return active_.count(&v) > 0; }
  bool wanted(const ir::Compute& c) const {
    return active(*c.result) && relevant_.count(c.result.get());
  }
  WantsGradient wants() const {
    return [this](const ir::Value& v) { return active(v); };
  }
  bool init_contributes(const ir::Compute& c) const {
    return c.init && c.op != ReduceOp::None && is_float(c.init->type) && active(*c.init);
  }

  // Which tensors depend on `wrt` (active) and reach a seed (relevant), and
  // how many contributions each adjoint will receive.
  void plan(const std::vector<ValuePtr>& wrt, const std::vector<Seed>& seeds) {
    for (const ValuePtr& x : wrt) {
      active_.insert(x.get());
      wrt_.insert(x.get());
    }
    for (const ForwardStmt& s : fwd_.stmts) {
      const ir::Compute& c = s.compute;
      if (!differentiable_reads(c.body, wants()).empty() || init_contributes(c))
        active_.insert(c.result.get());
    }
    for (const Seed& seed : seeds) {
      if (!active(*seed.output)) continue;
      relevant_.insert(seed.output.get());
      Adjoint& a = adjoints_[seed.output.get()];
      if (!seed.cotangent)
        a.one = true;
      else if (!a.tensor)
        a.tensor = seed.cotangent;
      else  // one value returned as two outputs: both cotangents apply
        a.tensor = sum_of(a.tensor, seed.cotangent);
    }
    for (auto it = fwd_.stmts.rbegin(); it != fwd_.stmts.rend(); ++it) {
      const ir::Compute& c = it->compute;
      if (!wanted(c)) continue;
      for (const Expr& read : differentiable_reads(c.body, wants())) expect(read->tensor);
      if (init_contributes(c)) expect(c.init);
    }
  }

  void expect(const ValuePtr& v) {
    relevant_.insert(v.get());
    adjoints_[v.get()].expected++;
  }

  // The backward statements of one forward statement.
  void statement(const ForwardStmt& s) {
    const ir::Compute& c = s.compute;
    if (!wanted(c)) return;
    const Adjoint& a = adjoints_.at(c.result.get());
    if (!a.tensor && !a.one) {
      // Every contribution to dT was zero (T reaches the outputs only through
      // `* 0`, say): so is every contribution this statement would make.
      for (const Expr& read : differentiable_reads(c.body, wants()))
        skip_contribution(*read->tensor);
      if (init_contributes(c)) skip_contribution(*c.init);
      return;
    }
    std::vector<Affine> at_out = ir::plain_indices(c.out);
    Expr d_result =
        a.one ? constant(1, compute_type(c.result->type)) : ir::make_read(a.tensor, at_out);
    Expr result = ir::make_read(c.result, at_out);

    Expr body_seed = d_result, init_seed = d_result, root_value = c.body;
    if (c.op == ReduceOp::None) root_value = result;  // reuse the stored value
    if (c.op == ReduceOp::Max || c.op == ReduceOp::Min) {
      Expr init_wins, zero = constant(0, d_result->type);
      if (c.init) {
        init_wins = ir::make_binary(BinOp::Eq, ir::make_read(c.init, at_out), result);
        init_seed = select(init_wins, d_result, zero);
      }
      if (!differentiable_reads(c.body, wants()).empty()) {
        TENET_ASSERT(!s.reshape, "a reshape is no reduction");
        const Expr at = ir::make_read(emit_argmax(s), at_out);
        return contribute_winner(s, at, init_wins, d_result, init_seed);
      }
    }
    if (c.op == ReduceOp::Prod) {
      ProductFactors f = emit_product_factors(s);
      init_seed = mul(d_result, f.all);
      body_seed = mul(d_result, f.others);
      if (c.init) body_seed = mul(body_seed, ir::make_read(c.init, at_out));
    }

    if (s.reshape) return contribute_reshape(s, d_result);
    std::vector<Dim> domain = c.out;
    domain.insert(domain.end(), c.reduce.begin(), c.reduce.end());
    for (const ReadAdjoint& ra : read_adjoints(c.body, root_value, body_seed, wants()))
      contribute(ra.read, ra.adjoint, domain, s);
    if (init_contributes(c)) contribute(ir::make_read(c.init, at_out), init_seed, c.out, s);
  }

  // The contributions of a max or min reduction, whose winning term alone has
  // a derivative. A read whose gradient would sum over the reduce points that
  // reach an element (a pooling window's pixel, covered by several windows,
  // each testing its argmax) reads at the winning point instead, through
  // computed indices (`at` decoded, reduce_point): its adjoint is a scatter,
  // one term per window. The others keep the masked gather (d_z(n, k) =
  // select(k == argmax(n), d_m(n), 0): one term per element already).
  void contribute_winner(const ForwardStmt& s, const Expr& at, const Expr& init_wins,
                         const Expr& d_result, const Expr& init_seed) {
    const ir::Compute& c = s.compute;
    const Expr zero = constant(0, d_result->type);
    Expr chosen = ir::make_binary(BinOp::Eq, linear_position(c.reduce), at);
    if (init_wins) chosen = both(ir::make_unary(ir::UnOp::Not, init_wins), chosen);
    std::vector<Dim> domain = c.out;
    domain.insert(domain.end(), c.reduce.begin(), c.reduce.end());
    const Expr winner = at_values(c.body, reduce_point(c.reduce, at));
    Expr won = ir::make_binary(BinOp::Lt, at, i64(domain_size(c.reduce)));
    if (init_wins) won = both(ir::make_unary(ir::UnOp::Not, init_wins), won);
    const std::vector<ReadAdjoint> each =
        read_adjoints(c.body, c.body, select(chosen, d_result, zero), wants());
    const std::vector<ReadAdjoint> at_winner =
        read_adjoints(winner, winner, select(won, d_result, zero), wants());
    TENET_ASSERT(each.size() == at_winner.size(),
                 "reads of a reduction and of its winning term differ");
    for (size_t k = 0; k < each.size(); ++k) {
      const Gather g = invert_read(domain, each[k].read, each[k].adjoint, taken_);
      if (g.reduce.empty())
        emit_contribution(each[k].read, g, s);
      else
        contribute(at_winner[k].read, at_winner[k].adjoint, c.out, s);
    }
    if (init_contributes(c))
      contribute(ir::make_read(c.init, ir::plain_indices(c.out)), init_seed, c.out, s);
  }

  // The factors of a product reduction R = init * prod_r x(r), exact where
  // some x(r) are 0 (no division by 0): with z the number of zero terms and
  // p the product of the nonzero ones, `all` = prod_r x(r) = (z == 0 ? p : 0)
  // and `others` = prod_{r' != r} x(r') = (z == 0 ? p / x(r) : z == 1 &&
  // x(r) == 0 ? p : 0), the derivative of the product by its term x(r).
  struct ProductFactors {
    Expr all, others;
  };
  ProductFactors emit_product_factors(const ForwardStmt& s) {
    const ir::Compute& c = s.compute;
    const ElemType t = c.body->type;
    const Expr zero = constant(0, t), one = constant(1, t);
    const Expr is_zero = ir::make_binary(BinOp::Eq, c.body, zero);
    const std::string base = stem(c.result->name);
    // A masked product (`select(g, x, 1)`: a where clause's range) keeps its
    // mask outermost in both, so that their loops narrow as the product's.
    Expr mask, term = c.body;
    if (c.body->kind == ir::ExprKind::Select && is_constant(c.body->args[2], 1)) {
      mask = c.body->args[0];
      term = c.body->args[1];
    }
    auto masked = [&](Expr e, const Expr& identity) {
      return mask ? select(mask, std::move(e), identity) : e;
    };
    const Expr term_is_zero = ir::make_binary(BinOp::Eq, term, zero);
    ValuePtr zeros = fb_.compute_auto(base + "_zeros", c.out, c.reduce, ReduceOp::Sum,
                                      masked(select(term_is_zero, one, zero), zero), nullptr,
                                      s.span, backward_source(s));
    ValuePtr nonzero = fb_.compute_auto(base + "_nonzero_prod", c.out, c.reduce, ReduceOp::Prod,
                                        masked(select(term_is_zero, one, term), one), nullptr,
                                        s.span, backward_source(s));
    note_backward("zero count and product of the nonzero terms of " + c.result->name +
                  ": its derivative by each term without dividing by 0");
    std::vector<Affine> at_out = ir::plain_indices(c.out);
    Expr z = ir::make_read(zeros, at_out), p = ir::make_read(nonzero, at_out);
    Expr no_zero = ir::make_binary(BinOp::Eq, z, zero);
    Expr one_zero_here = both(ir::make_binary(BinOp::Eq, z, one), is_zero);
    ProductFactors f;
    f.all = select(no_zero, p, zero);
    f.others = select(no_zero, div(p, c.body), select(one_zero_here, p, zero));
    return f;
  }

  ValuePtr emit_argmax(const ForwardStmt& s) {
    const ir::Compute& c = s.compute;
    const bool is_max = c.op == ReduceOp::Max;
    Expr at_result =
        ir::make_binary(BinOp::Eq, c.body, ir::make_read(c.result, ir::plain_indices(c.out)));
    Expr body = ir::make_select(at_result, linear_position(c.reduce), i64(domain_size(c.reduce)));
    std::string name = stem(c.result->name) + (is_max ? "_argmax" : "_argmin");
    ValuePtr arg = fb_.compute_auto(name, c.out, c.reduce, ReduceOp::Min, body, nullptr, s.span,
                                    backward_source(s));
    note_backward(std::string(is_max ? "argmax" : "argmin") + " of " + c.result->name +
                  ": the first in domain order wins ties");
    return arg;
  }

  // A planned contribution that is zero: counted, not emitted.
  void skip_contribution(const ir::Value& target) {
    Adjoint& a = adjoints_.at(&target);
    ++a.emitted;
    TENET_ASSERT(a.emitted <= a.expected, "unplanned contribution to " << target.name);
  }

  // y = reshape(x): dx += reshape(dy) into x's shape, a gather by the
  // inverse index map (ir/reshape.h), never a scatter. `d_result` is dy at
  // y's indices: a read of dy, or the constant seed of a scalar output.
  void contribute_reshape(const ForwardStmt& s, const Expr& d_result) {
    const Expr& read = s.compute.body;
    const ValuePtr& x = read->tensor;
    if (!active(*x)) return;
    Gather gather;
    gather.out = index_dims(*x);
    gather.body = d_result->kind == ir::ExprKind::Read
                      ? ir::reshape_read(d_result->tensor, gather.out)
                      : d_result;
    gather.kind = "reshape";
    if (emit_contribution(read, gather, s))
      fb_.annotations().reshape = gather.body->kind == ir::ExprKind::Read;
  }

  // dR += the contribution `g` of one read of R, as a gather over R's domain.
  void contribute(const Expr& read, const Expr& g, const std::vector<Dim>& domain,
                  const ForwardStmt& s) {
    emit_contribution(read, invert_read(domain, read, g, taken_), s);
  }

  // Adds one contribution to the adjoint of the tensor `read` reads; true when
  // that took a statement (false: it was zero, or dR is another tensor as is).
  bool emit_contribution(const Expr& read, const Gather& gather, const ForwardStmt& s) {
    const ValuePtr& target = read->tensor;
    Adjoint& a = adjoints_.at(target.get());
    ++a.emitted;
    TENET_ASSERT(a.emitted <= a.expected, "unplanned contribution to " << target->name);
    const bool last = a.emitted == a.expected;
    if (is_constant(gather.body, 0)) return false;  // e.g. through x * 0: nothing to add
    if (const ValuePtr& same = copied_tensor(gather, *target, a)) {
      a.tensor = same;  // dR is exactly another tensor: use it, copy nothing
      return false;
    }
    std::string name = "d_" + stem(target->name);
    if (a.emitted < a.expected) name += "_" + std::to_string(a.emitted);
    ValuePtr init = partial(a);
    ReduceOp op = gather.reduce.empty() && !init ? ReduceOp::None : ReduceOp::Sum;
    a.tensor = fb_.compute(name, gather.out, gather.reduce, op, gather.body, init, target->type,
                           s.span, backward_source(s));
    a.one = false;
    a.final_named = last;
    note_backward(gather.kind == "reshape" ? "reshape back to the shape of " + target->name
                                           : gather.kind + " for " + ir::read_text(*read));
    return true;
  }

  // The tensor a lone contribution would copy unchanged (d_y(..) = d_z(..) at
  // the same indices), or null. An input's gradient is still written out, as
  // d_<input>.
  const ValuePtr& copied_tensor(const Gather& gather, const ir::Value& target,
                                const Adjoint& a) const {
    static const ValuePtr none;
    const Expr& body = gather.body;
    if (gather.kind != "adjoint" || a.tensor || a.one || body->kind != ir::ExprKind::Read ||
        body->guarded || body->tensor->type != target.type || body->tensor->shape != target.shape ||
        (wrt_.count(&target) && a.emitted == a.expected))
      return none;
    for (size_t m = 0; m < gather.out.size(); ++m)
      if (!body->indices[m].is_plain_var() ||
          body->indices[m].terms[0].first != gather.out[m].index)
        return none;
    return body->tensor;
  }

  // The partial adjoint as a tensor, to accumulate onto. A seed of 1 never
  // gets contributions: only a statement defined before the seeded output can
  // reach it, and no such statement reads it (SSA).
  static ValuePtr partial(const Adjoint& a) {
    TENET_ASSERT(!a.one, "a contribution to a seeded scalar output");
    return a.tensor;
  }

  ValuePtr sum_of(const ValuePtr& x, const ValuePtr& y) {
    std::vector<Dim> dims = index_dims(*x);
    std::vector<Affine> at = ir::plain_indices(dims);
    ValuePtr v = fb_.compute("d_" + stem(x->name), dims, {}, ReduceOp::None,
                             add(ir::make_read(x, at), ir::make_read(y, at)), nullptr, x->type);
    note_backward("sum of cotangents");
    return v;
  }

  // The complete adjoint of an input, as an output named d_<input>.
  ValuePtr gradient_of(const ValuePtr& x) {
    auto it = adjoints_.find(x.get());
    if (it != adjoints_.end()) {
      TENET_ASSERT(it->second.emitted == it->second.expected,
                   "adjoint of " << x->name << " is missing contributions");
      if (it->second.final_named) return it->second.tensor;
    }
    std::vector<Dim> dims = index_dims(*x);
    Expr value = constant(0, compute_type(x->type));  // float16: a float32 body
    std::string note = "zero: " + x->name + " does not reach a differentiated output";
    if (it != adjoints_.end() && it->second.one) {
      value = constant(1, compute_type(x->type));
      note = "seed";
    } else if (it != adjoints_.end() && it->second.tensor) {
      value = ir::make_read(it->second.tensor, ir::plain_indices(dims));
      note = "copy of " + it->second.tensor->name;
    }
    ValuePtr g =
        fb_.compute("d_" + x->name, dims, {}, ReduceOp::None, value, nullptr, x->type, x->span);
    note_backward(note);
    return g;
  }

  /// Marks the statement just emitted as part of the backward half; `detail`
  /// says which part, for comments ("gather for x(i + j)").
  void note_backward(std::string detail) {
    ir::Annotations& annotations = fb_.annotations();
    annotations.ad = ir::AdOrigin::Backward;
    annotations.ad_detail = std::move(detail);
  }

  /// The comment of a backward statement: its forward statement's source,
  /// shortened past kMaxBackwardSource bytes (a statement with n reads has up
  /// to n adjoint statements: full copies would make the program quadratic).
  static std::string backward_source(const ForwardStmt& s) {
    if (s.source.empty()) return "";
    if (s.source.size() <= kMaxBackwardSource) return "backward: " + s.source;
    size_t cut = kMaxBackwardSource;
    while (cut > 0 && (static_cast<unsigned char>(s.source[cut]) & 0xC0) == 0x80) --cut;
    return "backward: " + s.source.substr(0, cut) + " ...";
  }

  ir::FunctionBuilder& fb_;
  const ForwardCopy& fwd_;
  const std::set<std::string>& taken_;
  std::set<const ir::Value*> active_, relevant_, wrt_;
  std::map<const ir::Value*, Adjoint> adjoints_;
};

}  // namespace

std::vector<ValuePtr> emit_backward(ir::FunctionBuilder& fb, const ForwardCopy& fwd,
                                    const std::vector<ValuePtr>& wrt,
                                    const std::vector<Seed>& seeds,
                                    const std::set<std::string>& taken_names) {
  return Reverse(fb, fwd, taken_names).run(wrt, seeds);
}

}  // namespace tenet::ad
