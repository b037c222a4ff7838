#include "lower/updates.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/mutator.h"

namespace tenet::lower {

namespace {

bool reads(const ir::Expr& e, const ir::Value& v) {
  return e && !ir::reads_of(e, &v).empty();
}

// Whether statement `s` (at any depth) uses `v`: in an expression, as an
// init, or as a loop's carried init.
bool uses(const ir::Stmt& s, const ir::Value& v) {
  if (s.kind == ir::StmtKind::Compute)
    return reads(s.compute.body, v) || s.compute.init.get() == &v;
  for (const auto& c : s.loop->carried)
    if (c.init.get() == &v) return true;
  for (const ir::Stmt& t : s.loop->body)
    if (uses(t, v)) return true;
  return false;
}

// Whether the statement defining the output reads `v` only at the element
// it writes: as its init, or in an element-wise body at its out indices.
bool same_element_only(const ir::Compute& c, const ir::Value& v) {
  std::vector<ir::Expr> rs = c.body ? ir::reads_of(c.body, &v) : std::vector<ir::Expr>{};
  if (rs.empty()) return true;
  if (c.op != ir::ReduceOp::None) return false;
  for (const ir::Expr& r : rs) {
    if (r->has_computed_index() || r->indices.size() != c.out.size()) return false;
    for (size_t d = 0; d < c.out.size(); ++d)
      if (!r->indices[d].is_plain_var() || r->indices[d].terms[0].first != c.out[d].index)
        return false;
  }
  return true;
}

}  // namespace

bool shares_buffer(const ir::Function& fn, const ir::Value& initial, const ir::Value& result) {
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const int k = fn.updated_input(i);
    if (k >= 0 && fn.outputs[i].get() == &result && fn.inputs[size_t(k)].get() == &initial)
      return true;
  }
  return false;
}

bool reads_precede_update(const ir::Function& fn, const ir::Value& initial,
                          const ir::Value& output) {
  bool written = false;
  for (const ir::Stmt& s : fn.body) {
    bool defines = s.kind == ir::StmtKind::Compute && s.compute.result.get() == &output;
    if (!defines && s.kind == ir::StmtKind::Loop)
      for (const auto& c : s.loop->carried) defines |= c.result.get() == &output;
    if (defines) {
      // A loop may write the output's buffer in any iteration: it must not
      // read the initial value at all.
      if (s.kind == ir::StmtKind::Loop ? uses(s, initial) : !same_element_only(s.compute, initial))
        return false;
      written = true;
      continue;
    }
    if (written && uses(s, initial)) return false;
  }
  return true;
}

void separate_updates(ir::Function& fn) {
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    int k = fn.updated_input(i);
    if (k < 0) continue;
    const ir::ValuePtr initial = fn.inputs[size_t(k)];
    if (reads_precede_update(fn, *initial, *fn.outputs[i])) continue;

    // A fresh id and name for the copy.
    int next_id = 0;
    std::set<std::string> names;
    auto note = [&](const ir::ValuePtr& v) {
      if (!v) return;
      next_id = std::max(next_id, v->id + 1);
      names.insert(v->name);
    };
    for (const ir::ValuePtr& v : fn.inputs) note(v);
    ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
      if (s.kind == ir::StmtKind::Compute) return note(s.compute.result);
      for (const auto& c : s.loop->carried) {
        note(c.param);
        note(c.next);
        note(c.result);
      }
    });
    std::string name = initial->name + ".initial";
    for (int n = 1; names.count(name); ++n) name = initial->name + ".initial" + std::to_string(n);
    ir::ValuePtr copy = ir::make_value(next_id, name, initial->type, initial->shape, initial->span);

    // Every use reads the copy, made first.
    const std::map<const ir::Value*, ir::ValuePtr> to{{initial.get(), copy}};
    struct Redirect : ir::StmtMutator {
      const std::map<const ir::Value*, ir::ValuePtr>& to;
      explicit Redirect(const std::map<const ir::Value*, ir::ValuePtr>& t) : to(t) {}
      void mutate_compute(ir::Stmt& s, std::vector<ir::Stmt>& out) override {
        if (s.compute.body) s.compute.body = ir::replace_tensors(s.compute.body, to);
        if (auto it = to.find(s.compute.init.get()); it != to.end()) s.compute.init = it->second;
        out.push_back(std::move(s));
      }
      void mutate_loop(ir::Stmt& s, std::vector<ir::Stmt>& out) override {
        for (auto& c : s.loop->carried)
          if (auto it = to.find(c.init.get()); it != to.end()) c.init = it->second;
        ir::StmtMutator::mutate_loop(s, out);
      }
    } redirect(to);
    redirect.mutate_block(fn.body);

    ir::Stmt s;
    s.kind = ir::StmtKind::Compute;
    s.span = initial->span;
    s.source =
        "the initial value of " + fn.output_names[i] + ", read after the output is written: a copy";
    std::vector<ir::Affine> at;
    for (size_t d = 0; d < initial->shape.size(); ++d) {
      std::string index = "i" + std::to_string(d);
      s.compute.out.push_back(ir::Dim{index, ir::SizeExpr(0), initial->shape[d]});
      at.push_back(ir::Affine::var(index));
    }
    s.compute.result = copy;
    s.compute.body = ir::make_read(initial, std::move(at));
    fn.body.insert(fn.body.begin(), std::move(s));
  }
}

}  // namespace tenet::lower
