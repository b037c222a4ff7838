#include "ir/bind.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ir/mutator.h"
#include "support/checked.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

std::string join_dims(const std::vector<std::string>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + dims[i];
  return out + "]";
}

/// "float32[B, N, D] = [2, 3, 4]": the declared shape, followed by its values
/// when it has symbols and every one of them is known under `sizes`.
std::string describe_expected(const Value& decl, const SizeBindings& sizes) {
  std::vector<std::string> dims, values;
  bool symbolic = false, known = true;
  for (const SizeExpr& d : decl.shape) {
    dims.push_back(d.str());
    if (d.is_constant()) {
      values.push_back(d.str());
      continue;
    }
    symbolic = true;
    for (const auto& s : d.symbols()) known = known && sizes.count(s);
    if (known) values.push_back(std::to_string(d.eval(sizes)));
  }
  std::string out = std::string(type_name(decl.type)) + join_dims(dims);
  if (symbolic && known) out += " = " + join_dims(values);
  return out;
}

[[noreturn]] void shape_mismatch(const Value& decl, const TensorShape& actual,
                                 const SizeBindings& sizes) {
  throw BindError("input '" + decl.name + "': expected " + describe_expected(decl, sizes) +
                  ", got " + actual.describe());
}

/// "H = 7, W = 5" for the symbols of the given expressions.
std::string symbol_values(const std::vector<SizeExpr>& exprs, const SizeBindings& sizes) {
  std::set<std::string> symbols;
  for (const SizeExpr& e : exprs)
    for (const auto& s : e.symbols()) symbols.insert(s);
  std::string out;
  for (const auto& s : symbols) {
    auto it = sizes.find(s);
    out += (out.empty() ? "" : ", ") + s + " = " +
           (it == sizes.end() ? std::string("?") : std::to_string(it->second));
  }
  return out;
}

/// A dimension that is neither a constant nor a single symbol (e.g. 2*N + 1):
/// checked, or solved for its one unknown symbol, once the plain symbols are bound.
struct DeferredDim {
  size_t input;
  size_t dim;
};

/// Solves `e = target` for `sym`. Linear expressions (2*N + 1) are solved
/// exactly; others (N / 2, N*N) cannot be, since several values may fit.
struct Solution {
  bool linear = false;
  std::optional<int64_t> value;  // unset: no non-negative integer fits
};
Solution solve_for(const SizeExpr& e, const std::string& sym, int64_t target, SizeBindings sizes) {
  auto at = [&](int64_t x) {
    sizes[sym] = x;
    return e.eval(sizes);
  };
  int64_t f0 = at(0), f1 = at(1), f2 = at(2);
  auto slope = checked_sub(f1, f0), step = checked_sub(f2, f1), rise = checked_sub(target, f0);
  Solution s;
  s.linear = slope && *slope != 0 && step == slope;
  if (!s.linear || !rise || *rise % *slope != 0) return s;
  int64_t x = *rise / *slope;
  if (x >= 0 && at(x) == target) s.value = x;
  return s;
}

[[noreturn]] void cannot_infer(const Value& decl, size_t dim,
                               const std::vector<std::string>& syms) {
  std::string list, give;
  for (const auto& s : syms) {
    list += (list.empty() ? "'" : ", '") + s + "'";
    give += (give.empty() ? "" : ",") + s + "=...";
  }
  throw BindError("input '" + decl.name + "': cannot infer size parameter" +
                  (syms.size() > 1 ? "s " : " ") + list + " from dimension " + std::to_string(dim) +
                  " (" + decl.shape[dim].str() + "); give " + (syms.size() > 1 ? "them" : "it") +
                  " with --sizes " + give);
}

/// Every size symbol the function's shapes, ranges, index offsets and size
/// expressions mention.
std::set<std::string> used_symbols(const Function& fn) {
  std::set<std::string> used;
  auto add = [&](const SizeExpr& e) {
    for (const auto& s : e.symbols()) used.insert(s);
  };
  auto add_value = [&](const ValuePtr& v) {
    if (!v) return;
    for (const auto& d : v->shape) add(d);
  };
  auto expr = [&](const Expr& e) {
    if (e->kind == ExprKind::Size) add(e->size);
    if (e->kind == ExprKind::Read)
      for (const auto& a : e->indices) add(a.offset);
  };
  for (const auto& v : fn.inputs) add_value(v);
  for_each_stmt(fn.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Loop) {
      for (const auto& c : s.loop->carried) add_value(c.result);
      return;
    }
    const Compute& c = s.compute;
    add_value(c.result);
    for (const Dim& d : c.out) add(d.lo), add(d.hi);
    for (const Dim& d : c.reduce) add(d.lo), add(d.hi);
    for_each_node(c.body, expr);
  });
  return used;
}

void check_range(const Dim& d, const Value& result, const SizeBindings& sizes) {
  int64_t lo = d.lo.eval(sizes), hi = d.hi.eval(sizes);
  if (hi >= lo) return;
  std::string symbols = symbol_values({d.lo, d.hi}, sizes);
  throw BindError("index '" + d.index + "' of the statement defining '" + result.name +
                  "' has an empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + ")" +
                  (symbols.empty() ? "" : " for " + symbols));
}

/// Every dimension non-negative, and the element count and byte size in 64 bits.
void check_shape(const Value& v, const SizeBindings& sizes) {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    int64_t n = v.shape[i].eval(sizes);
    shape.push_back(n);
    if (n >= 0) continue;
    std::string symbols = symbol_values({v.shape[i]}, sizes);
    throw BindError("dimension " + std::to_string(i) + " of '" + v.name + "' is " +
                    v.shape[i].str() + " = " + std::to_string(n) +
                    (symbols.empty() ? "" : " for " + symbols));
  }
  check_tensor_bytes("tensor '" + v.name + "'", v.type, shape);
}

/// Where each index of a statement (and each enclosing loop's variable) ranges: [lo, hi).
using IndexRanges = std::map<std::string, std::pair<int64_t, int64_t>>;

/// The smallest and largest value of every read's indices over the
/// statement's domain must fit in 64 bits: the interpreter's and the
/// generated code's index arithmetic and bounds checks rely on it (a
/// wrapped 2*k would land back inside the tensor).
void check_index_arithmetic(const Expr& e, const IndexRanges& ranges, const SizeBindings& sizes,
                            const std::string& statement) {
  for (const auto& a : e->args) check_index_arithmetic(a, ranges, sizes, statement);
  if (e->kind != ExprKind::Read) return;
  for (const Expr& c : e->computed)  // wraps like the program's integer arithmetic
    if (c) check_index_arithmetic(c, ranges, sizes, statement);
  for (size_t d = 0; d < e->indices.size(); ++d) {
    const Affine& a = e->indices[d];
    // The negative and the positive parts of the terms summed apart: every
    // partial sum, in whatever order the code adds the terms, lies between.
    const int64_t offset = a.offset.eval(sizes);
    std::optional<int64_t> negative = std::min<int64_t>(offset, 0);
    std::optional<int64_t> positive = std::max<int64_t>(offset, 0);
    for (const auto& [index, coef] : a.terms) {
      auto it = ranges.find(index);
      if (it == ranges.end()) continue;  // the verifier reports unknown indices
      const auto [lo, hi] = it->second;
      const auto first = checked_mul(coef, lo), last = checked_mul(coef, hi - 1);
      if (!first || !last) {
        negative = positive = std::nullopt;
        break;
      }
      const int64_t least = std::min({*first, *last, int64_t(0)});
      const int64_t most = std::max({*first, *last, int64_t(0)});
      negative = negative ? checked_add(*negative, least) : std::nullopt;
      positive = positive ? checked_add(*positive, most) : std::nullopt;
    }
    if (negative && positive) continue;
    std::string read = e->tensor->name + "(";
    for (size_t i = 0; i < e->indices.size(); ++i) read += (i ? ", " : "") + e->indices[i].str();
    std::string where;
    for (const auto& [index, coef] : a.terms)
      if (auto it = ranges.find(index); it != ranges.end())
        where += (where.empty() ? "" : ", ") + index + " in " + std::to_string(it->second.first) +
                 ":" + std::to_string(it->second.second);
    throw BindError("index " + a.str() + " of the read " + read + ") in the statement defining '" +
                    statement + "' overflows a 64-bit integer for " + where);
  }
}

void check_statements(const std::vector<Stmt>& body, const IndexRanges& outer,
                      const SizeBindings& sizes) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::Loop) {
      IndexRanges inner = outer;
      inner[s.loop->var] = {0, s.loop->trip};
      if (s.loop->trip > 0) check_statements(s.loop->body, inner, sizes);
      for (const auto& c : s.loop->carried) check_shape(*c.result, sizes);
      continue;
    }
    const Compute& c = s.compute;
    IndexRanges inner = outer;
    bool empty = false;
    for (const auto* dims : {&c.out, &c.reduce}) {
      for (const Dim& d : *dims) {
        check_range(d, *c.result, sizes);
        const int64_t lo = d.lo.eval(sizes), hi = d.hi.eval(sizes);
        if (!checked_sub(hi, lo))
          throw BindError("index '" + d.index + "' of the statement defining '" + c.result->name +
                          "' has a range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                          ") longer than 64-bit integers count");
        empty = empty || hi == lo;
        inner[d.index] = {lo, hi};
      }
    }
    check_shape(*c.result, sizes);
    if (!empty) check_index_arithmetic(c.body, inner, sizes, c.result->name);
  }
}

/// The sizes given by name, each a size parameter of `fn` and not negative.
SizeBindings given_sizes(const Function& fn, const SizeBindings& given) {
  const std::set<std::string> params(fn.size_params.begin(), fn.size_params.end());
  SizeBindings sizes;
  for (const auto& [name, value] : given) {
    if (!params.count(name)) {
      std::string list;
      for (const auto& p : fn.size_params) list += (list.empty() ? "" : ", ") + p;
      throw BindError("'" + fn.name + "' has no size parameter '" + name + "'" +
                      (list.empty() ? "" : " (its size parameters are " + list + ")"));
    }
    if (value < 0)
      throw BindError("size parameter '" + name + "' cannot be negative (given " + name + " = " +
                      std::to_string(value) + ")");
    sizes[name] = value;
  }
  return sizes;
}

/// Binds the input dimensions that are plain symbols (the first binding wins,
/// later ones must agree) and checks the constant ones; returns the compound
/// dimensions, to check or solve once the plain symbols are known.
std::vector<DeferredDim> bind_plain_dims(const Function& fn, const std::vector<TensorShape>& inputs,
                                         SizeBindings& sizes) {
  std::vector<DeferredDim> deferred;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& decl = *fn.inputs[i];
    const TensorShape& actual = inputs[i];
    if (actual.rank() != decl.rank()) shape_mismatch(decl, actual, sizes);
    SizeBindings trial = sizes;
    bool ok = actual.type == decl.type;
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      const SizeExpr& e = decl.shape[d];
      int64_t extent = actual.shape[d];
      if (auto c = e.constant()) {
        ok = ok && *c == extent;
      } else if (auto sym = e.as_symbol()) {
        auto [it, inserted] = trial.emplace(*sym, extent);
        ok = ok && (inserted || it->second == extent);
      } else {
        deferred.push_back({i, d});
      }
    }
    if (!ok) shape_mismatch(decl, actual, trial);
    sizes = std::move(trial);
  }
  return deferred;
}

/// Checks the compound dimensions, solving each for its one unknown symbol
/// while any has one; fails on one left with several unknowns.
void bind_compound_dims(const Function& fn, const std::vector<TensorShape>& inputs,
                        std::vector<DeferredDim> deferred, SizeBindings& sizes) {
  for (bool progress = true; progress && !deferred.empty();) {
    progress = false;
    for (auto it = deferred.begin(); it != deferred.end();) {
      const Value& decl = *fn.inputs[it->input];
      const TensorShape& actual = inputs[it->input];
      const SizeExpr& e = decl.shape[it->dim];
      int64_t extent = actual.shape[it->dim];
      std::vector<std::string> unknown;
      for (const auto& s : e.symbols())
        if (!sizes.count(s)) unknown.push_back(s);
      if (unknown.size() > 1) {
        ++it;
        continue;
      }
      if (unknown.size() == 1) {
        Solution x = solve_for(e, unknown[0], extent, sizes);
        if (!x.linear) cannot_infer(decl, it->dim, unknown);
        if (!x.value) shape_mismatch(decl, actual, sizes);
        sizes[unknown[0]] = *x.value;
      }
      if (e.eval(sizes) != extent) shape_mismatch(decl, actual, sizes);
      it = deferred.erase(it);
      progress = true;
    }
  }

  if (!deferred.empty()) {
    const DeferredDim& d = deferred.front();
    std::vector<std::string> unknown;
    for (const auto& s : fn.inputs[d.input]->shape[d.dim].symbols())
      if (!sizes.count(s)) unknown.push_back(s);
    cannot_infer(*fn.inputs[d.input], d.dim, unknown);
  }
}

}  // namespace

SizeBindings bind_sizes(const Function& fn, const std::vector<Tensor>& inputs,
                        const SizeBindings& given) {
  std::vector<TensorShape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape_only());
  return bind_shapes(fn, shapes, given);
}

SizeBindings bind_shapes(const Function& fn, const std::vector<TensorShape>& inputs,
                         const SizeBindings& given) {
  if (inputs.size() != fn.inputs.size()) {
    size_t n = fn.inputs.size();
    throw BindError("'" + fn.name + "' takes " + std::to_string(n) +
                    (n == 1 ? " input, " : " inputs, ") + std::to_string(inputs.size()) + " given");
  }
  SizeBindings sizes = given_sizes(fn, given);
  std::vector<DeferredDim> deferred = bind_plain_dims(fn, inputs, sizes);
  bind_compound_dims(fn, inputs, std::move(deferred), sizes);
  check_sizes(fn, sizes);
  return sizes;
}

void check_sizes(const Function& fn, const SizeBindings& sizes) {
  for (const auto& [name, value] : sizes)
    if (value < 0)
      throw BindError("size parameter '" + name + "' cannot be negative (given " + name + " = " +
                      std::to_string(value) + ")");
  std::set<std::string> used = used_symbols(fn);
  for (const auto& p : fn.size_params)
    if (used.count(p) && !sizes.count(p))
      throw BindError("size parameter '" + p + "' is not bound; give it with --sizes " + p +
                      "=...");

  for (const auto& v : fn.inputs) check_shape(*v, sizes);
  check_statements(fn.body, {}, sizes);
}

std::vector<int64_t> concrete_shape(const Value& v, const SizeBindings& sizes) {
  std::vector<int64_t> shape;
  for (const SizeExpr& d : v.shape) shape.push_back(d.eval(sizes));
  return shape;
}

namespace {
/// Throws what allocate() would, without allocating: a negative dimension
/// (with the sizes that make it so), an overflowing byte size, too many bytes.
void check_allocatable(const Value& v, const SizeBindings& sizes, const std::vector<int64_t>& shape,
                       ElemType type) {
  check_shape(v, sizes);
  const std::string what = "tensor '" + v.name + "'";
  check_allocation(what + " of shape " + shape_text(shape), check_tensor_bytes(what, type, shape));
}
}  // namespace

Tensor allocate(const Value& v, const SizeBindings& sizes, std::optional<ElemType> type) {
  const std::vector<int64_t> shape = concrete_shape(v, sizes);
  check_allocatable(v, sizes, shape, type.value_or(v.type));
  return Tensor(type.value_or(v.type), shape);
}

std::vector<Tensor> random_inputs(const Function& fn, const SizeBindings& sizes, uint64_t seed,
                                  int64_t int_hi) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const Value& v = *fn.inputs[i];
    const std::vector<int64_t> shape = concrete_shape(v, sizes);
    check_allocatable(v, sizes, shape, v.type);
    out.push_back(random_tensor(v.type, shape, seed + i, -1.0, 1.0, int_hi));
  }
  return out;
}

}  // namespace tenet::ir
