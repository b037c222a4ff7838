#include "ir/bind.h"

#include <functional>
#include <set>
#include <sstream>

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

[[noreturn]] void shape_mismatch(const Value& decl, const Tensor& actual,
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
  int64_t slope = f1 - f0;
  Solution s;
  s.linear = slope != 0 && f2 - f1 == slope;
  if (!s.linear || (target - f0) % slope != 0) return s;
  int64_t x = (target - f0) / slope;
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
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e->kind == ExprKind::Size) add(e->size);
    if (e->kind == ExprKind::Read)
      for (const auto& a : e->indices) add(a.offset);
    for (const auto& arg : e->args) expr(arg);
  };
  std::function<void(const std::vector<Stmt>&)> block = [&](const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::Loop) {
        for (const auto& c : s.loop->carried) add_value(c.result);
        block(s.loop->body);
        continue;
      }
      const Compute& c = s.compute;
      add_value(c.result);
      for (const Dim& d : c.out) add(d.lo), add(d.hi);
      for (const Dim& d : c.reduce) add(d.lo), add(d.hi);
      expr(c.body);
    }
  };
  for (const auto& v : fn.inputs) add_value(v);
  block(fn.body);
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

void check_shape(const Value& v, const SizeBindings& sizes) {
  for (size_t i = 0; i < v.shape.size(); ++i) {
    int64_t n = v.shape[i].eval(sizes);
    if (n >= 0) continue;
    std::string symbols = symbol_values({v.shape[i]}, sizes);
    throw BindError("dimension " + std::to_string(i) + " of '" + v.name + "' is " +
                    v.shape[i].str() + " = " + std::to_string(n) +
                    (symbols.empty() ? "" : " for " + symbols));
  }
}

void check_ranges(const std::vector<Stmt>& body, const SizeBindings& sizes) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::Loop) {
      check_ranges(s.loop->body, sizes);
      for (const auto& c : s.loop->carried) check_shape(*c.result, sizes);
      continue;
    }
    const Compute& c = s.compute;
    for (const Dim& d : c.out) check_range(d, *c.result, sizes);
    for (const Dim& d : c.reduce) check_range(d, *c.result, sizes);
    check_shape(*c.result, sizes);
  }
}

}  // namespace

SizeBindings bind_sizes(const Function& fn, const std::vector<Tensor>& inputs,
                        const SizeBindings& given) {
  if (inputs.size() != fn.inputs.size()) {
    size_t n = fn.inputs.size();
    throw BindError("'" + fn.name + "' takes " + std::to_string(n) +
                    (n == 1 ? " input, " : " inputs, ") + std::to_string(inputs.size()) + " given");
  }
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

  // Plain symbols first (the first binding wins, later ones must agree), so
  // that compound dimensions can be checked or solved afterwards.
  std::vector<DeferredDim> deferred;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& decl = *fn.inputs[i];
    const Tensor& actual = inputs[i];
    if (actual.rank() != decl.rank()) shape_mismatch(decl, actual, sizes);
    SizeBindings trial = sizes;
    bool ok = actual.type() == decl.type;
    for (size_t d = 0; d < decl.shape.size(); ++d) {
      const SizeExpr& e = decl.shape[d];
      int64_t extent = actual.shape()[d];
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

  for (bool progress = true; progress && !deferred.empty();) {
    progress = false;
    for (auto it = deferred.begin(); it != deferred.end();) {
      const Value& decl = *fn.inputs[it->input];
      const Tensor& actual = inputs[it->input];
      const SizeExpr& e = decl.shape[it->dim];
      int64_t extent = actual.shape()[it->dim];
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

  check_ranges(fn.body, sizes);
}

std::vector<int64_t> concrete_shape(const Value& v, const SizeBindings& sizes) {
  std::vector<int64_t> shape;
  for (const SizeExpr& d : v.shape) shape.push_back(d.eval(sizes));
  return shape;
}

std::vector<Tensor> random_inputs(const Function& fn, const SizeBindings& sizes, uint64_t seed,
                                  int64_t int_hi) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const Value& v = *fn.inputs[i];
    out.push_back(random_tensor(v.type, concrete_shape(v, sizes), seed + i, -1.0, 1.0, int_hi));
  }
  return out;
}

}  // namespace tenet::ir
