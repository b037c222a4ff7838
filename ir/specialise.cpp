#include "ir/specialise.h"

#include <algorithm>
#include <map>

#include "ir/bind.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

/// Every value of a function (inputs, results, loop-carried tensors) copied
/// once with its shape's sizes replaced, and every expression, range and
/// statement rewritten to use the copies.
class Specialiser : public ExprMutator {
 public:
  explicit Specialiser(const SizeBindings& sizes) {
    for (const auto& [name, value] : sizes) repl_[name] = SizeExpr(value);
  }

  SizeExpr size(const SizeExpr& e) const { return e.substitute(repl_); }

  ValuePtr value(const ValuePtr& v) {
    if (!v) return v;
    auto [it, fresh] = values_.try_emplace(v.get());
    if (fresh) {
      std::vector<SizeExpr> shape;
      for (const SizeExpr& d : v->shape) shape.push_back(size(d));
      it->second = with_shape(v, std::move(shape));
    }
    return it->second;
  }

  Dim dim(const Dim& d) const { return {d.index, size(d.lo), size(d.hi)}; }

  std::vector<Dim> dims(const std::vector<Dim>& ds) const {
    std::vector<Dim> out;
    for (const Dim& d : ds) out.push_back(dim(d));
    return out;
  }

  void block(std::vector<Stmt>& body) {
    for (Stmt& s : body) {
      if (s.kind == StmtKind::Loop) {
        Loop& l = *s.loop;
        for (Loop::Carried& c : l.carried) {
          c.init = value(c.init);
          c.param = value(c.param);
        }
        block(l.body);
        for (Loop::Carried& c : l.carried) {
          c.next = value(c.next);
          c.result = value(c.result);
        }
        continue;
      }
      Compute& c = s.compute;
      c.body = mutate(c.body);
      c.init = value(c.init);
      c.out = dims(c.out);
      c.reduce = dims(c.reduce);
      c.result = value(c.result);
    }
  }

 protected:
  Expr mutate_size(const Expr& e) override {
    SizeExpr s = size(e->size);
    return s == e->size ? e : make_size(s);
  }
  ValuePtr mutate_tensor(const ValuePtr& tensor) override { return value(tensor); }
  Affine mutate_affine(const Affine& index) override {
    Affine a = index;
    a.offset = size(a.offset);
    return a;
  }

 private:
  std::map<std::string, SizeExpr> repl_;
  std::map<const Value*, ValuePtr> values_;
};

/// A BindError unless every size names a size parameter of `fn` and none is negative.
void check_names(const Function& fn, const SizeBindings& sizes) {
  for (const auto& [name, value] : sizes) {
    if (std::find(fn.size_params.begin(), fn.size_params.end(), name) == fn.size_params.end()) {
      std::string params;
      for (const std::string& p : fn.size_params) params += (params.empty() ? "" : ", ") + p;
      throw BindError("'" + fn.name + "' has no size parameter '" + name +
                      "' (its size parameters: " + (params.empty() ? "none" : params) + ")");
    }
    if (value < 0)
      throw BindError("size parameter '" + name + "' cannot be negative (given " + name + " = " +
                      std::to_string(value) + ")");
  }
}

/// A BindError when a shape or range of `fn` is a negative constant (some
/// parameters still free: check_sizes needs them all).
void check_constant_extents(const Function& fn) {
  auto check = [&](const SizeExpr& e, const std::string& what) {
    std::optional<int64_t> k = e.constant();
    if (k && *k < 0)
      throw BindError(what + " has negative extent " + e.str() + " with the sizes given");
  };
  for (const ValuePtr& v : fn.inputs)
    for (const SizeExpr& d : v->shape) check(d, "input '" + v->name + "'");
  for_each_stmt(fn.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::Compute) return;
    for (const SizeExpr& d : s.compute.result->shape)
      check(d, "tensor '" + s.compute.result->name + "'");
    for (const Dim& d : s.compute.reduce)
      check(d.extent(), "index '" + d.index + "' of '" + s.compute.result->name + "'");
  });
}

}  // namespace

Function specialise_sizes(const Function& fn, const SizeBindings& sizes) {
  check_names(fn, sizes);
  if (sizes.empty()) return fn.clone();
  bool all = true;
  for (const std::string& p : fn.size_params) all = all && sizes.count(p);
  if (all) check_sizes(fn, sizes);  // the binder's own messages, with every size known

  Specialiser s(sizes);
  Function out = fn.clone();
  out.size_params.clear();
  for (const std::string& p : fn.size_params)
    if (!sizes.count(p)) out.size_params.push_back(p);
  for (ValuePtr& v : out.inputs) v = s.value(v);
  s.block(out.body);
  for (ValuePtr& v : out.outputs) v = s.value(v);
  if (!all) check_constant_extents(out);
  return out;
}

}  // namespace tenet::ir
