// Source identifiers for the unparser: one per group of values, per index and
// per loop variable, each valid ([A-Za-z_][A-Za-z0-9_]*), unique where the
// language needs it, and clear of keywords, type names, builtins, size
// parameters and the function's own name. Output names and input names are
// kept whenever they are free; other groups take their shortest member's name
// (`d_x` rather than `d_x_1`).
#include "ir/builtins.h"
#include "lang/unparse_internal.h"

namespace tenet::lang::unparse_detail {

const std::string& Names::of_index(const std::string& ir_name) const {
  auto it = index.find(ir_name);
  return it == index.end() ? ir_name : it->second;
}

namespace {

// Keywords, type names and builtins (ir/builtins.h; max and min are also the
// words of max=! and min=!).
const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = [] {
    std::set<std::string> out;
    for (std::string_view w : ir::keywords()) out.emplace(w);
    for (std::string_view w : ir::type_names()) out.emplace(w);
    for (const ir::Builtin& b : ir::builtins()) out.emplace(b.name);
    return out;
  }();
  return words;
}

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "t_" + out;
  return out;
}

class Namer {
 public:
  explicit Namer(std::set<std::string> taken) : taken_(std::move(taken)) {}

  /// `base` if free, else base_1, base_2, ...; the result is taken.
  std::string claim(const std::string& wanted) {
    std::string base = sanitize(wanted);
    std::string name = base;
    for (int k = 1; taken_.count(name) || reserved_words().count(name); ++k)
      name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }
  void take(const std::string& name) { taken_.insert(name); }
  bool free(const std::string& name) const {
    return !taken_.count(name) && !reserved_words().count(name);
  }

 private:
  std::set<std::string> taken_;
};

/// Every value of the Lines in order of appearance, and every index name.
struct Appearance {
  std::vector<ValueKey> values;
  std::vector<std::string> indices;
  std::vector<std::string> loop_vars;
  std::set<ValueKey> seen_values;
  std::set<std::string> seen_indices;

  void value(const ir::ValuePtr& v) {
    if (v && seen_values.insert(v.get()).second) values.push_back(v.get());
  }
  void index(const std::string& i) {
    if (seen_indices.insert(i).second) indices.push_back(i);
  }
  void expr(const ir::Expr& e) {
    if (e->kind == ir::ExprKind::Read) {
      value(e->tensor);
      for (const auto& a : e->indices)
        for (const auto& [name, c] : a.terms) index(name);
      for (const auto& c : e->computed)
        if (c) expr(c);
    }
    if (e->kind == ir::ExprKind::Index) index(e->index);
    for (const auto& a : e->args) expr(a);
  }
  void lines(const std::vector<Line>& ls) {
    for (const Line& l : ls) {
      if (l.kind == Line::Kind::Assign) {
        for (const auto& d : l.out) index(d.index);
        for (const auto& d : l.reduce) index(d.index);
        expr(l.body);
        value(l.init);
        value(l.target);
        continue;
      }
      loop_vars.push_back(l.var);
      for (const Carry& c : l.carries) {
        value(c.init);
        value(c.param);
      }
      lines(l.body_lines);
      for (const Carry& c : l.carries) {
        value(c.next);
        value(c.result);
      }
    }
  }
};

}  // namespace

Names assign_names(const ir::Function& fn, const Lowered& lowered) {
  Names names;
  std::set<std::string> sizes(fn.size_params.begin(), fn.size_params.end());
  Namer namer(sizes);
  names.function = namer.claim(fn.name);

  // Inputs keep their names; a dimension that is neither a name nor a
  // positive constant gets a fresh size name (the same one for equal sizes).
  std::map<std::string, std::string> fresh_by_key;
  for (const auto& in : fn.inputs) names.tensor[in.get()] = namer.claim(in->name);
  for (const auto& in : fn.inputs) {
    std::vector<ir::SizeExpr> shape;
    for (size_t d = 0; d < in->shape.size(); ++d) {
      const ir::SizeExpr& s = in->shape[d];
      auto c = s.constant();
      if (s.as_symbol() || (c && *c >= 1)) {
        shape.push_back(s);
        continue;
      }
      auto [it, added] = fresh_by_key.emplace(s.key(), "");
      if (added) {
        it->second = namer.claim(names.tensor.at(in.get()) + "_dim" + std::to_string(d));
        names.fresh.push_back({it->second, s});
      }
      shape.push_back(ir::SizeExpr::sym(it->second));
    }
    names.input_shape[in.get()] = std::move(shape);
  }

  Appearance seen;
  for (const auto& in : fn.inputs) seen.value(in);
  seen.lines(lowered.lines);

  // Group names: outputs first (in output order), then loop variables, then
  // the other groups in order of appearance.
  std::map<ValueKey, std::string> group_name;
  for (const OutputSlot& o : lowered.outputs) {
    ValueKey root = lowered.groups.find(o.value.get());
    if (!group_name.count(root) && !names.tensor.count(o.value.get()))
      group_name[root] = namer.claim(o.name);
  }
  for (const std::string& var : seen.loop_vars)
    if (!names.index.count(var)) names.index[var] = namer.claim(var);
  std::map<ValueKey, std::vector<ValueKey>> members;
  for (ValueKey v : seen.values) members[lowered.groups.find(v)].push_back(v);
  for (ValueKey v : seen.values) {
    if (names.tensor.count(v)) continue;  // an input
    ValueKey root = lowered.groups.find(v);
    if (!group_name.count(root)) {
      std::string best;
      for (ValueKey m : members[root]) {
        std::string candidate = sanitize(m->name);
        if (best.empty() || candidate.size() < best.size()) best = candidate;
      }
      group_name[root] = namer.claim(best);
    }
    names.tensor[v] = group_name[root];
  }

  // Indices: unchanged when free; a renamed one also avoids every other
  // index's original name, so distinct IR indices stay distinct.
  for (const std::string& i : seen.indices)
    if (!names.index.count(i) && namer.free(sanitize(i)) && sanitize(i) == i) names.index[i] = i;
  for (const std::string& i : seen.indices) namer.take(names.index.count(i) ? names.index[i] : i);
  for (const std::string& i : seen.indices)
    if (!names.index.count(i)) names.index[i] = namer.claim(i);
  return names;
}

}  // namespace tenet::lang::unparse_detail
