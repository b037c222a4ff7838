// The unparser's driver and its text. Rounds of lower -> name -> replay (see
// unparse_internal.h) run until the replay finds nothing to refuse; each
// refusal removes at least one merge, so the rounds end. Then the Lines are
// printed: a `def` with the inputs' declared shapes, one statement per line,
// comments above the statements, loops indented.
#include "lang/unparse.h"

#include <memory>
#include <sstream>

#include "lang/unparse_internal.h"
#include "support/error.h"

namespace tenet::lang {

namespace {

using namespace unparse_detail;

/// Whitespace runs as one space, trimmed: compares a statement's source with
/// its printed form.
std::string normalised(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

class Printer {
 public:
  Printer(const ir::Function& fn, const Lowered& lowered, const Names& names,
          const Decisions& decisions, const UnparseOptions& options)
      : fn_(fn),
        lowered_(lowered),
        names_(names),
        text_(names, decisions.guard),
        options_(options) {}

  std::string run() {
    if (!names_.fresh.empty()) {
      os_ << "# sizes named for the language, which declares input sizes by name:";
      for (size_t i = 0; i < names_.fresh.size(); ++i)
        os_ << (i ? "," : "") << " " << names_.fresh[i].first << " = "
            << size_text(names_.fresh[i].second, fn_.name);
      os_ << "\n";
    }
    os_ << "def " << names_.function << "(";
    for (size_t i = 0; i < fn_.inputs.size(); ++i) {
      const ir::ValuePtr& in = fn_.inputs[i];
      os_ << (i ? ", " : "") << type_name(in->type);
      const auto& shape = names_.input_shape.at(in.get());
      if (!shape.empty()) {
        os_ << "(";
        for (size_t d = 0; d < shape.size(); ++d) os_ << (d ? ", " : "") << shape[d].str();
        os_ << ")";
      }
      os_ << " " << names_.of(in);
    }
    os_ << ") -> (";
    for (size_t i = 0; i < lowered_.outputs.size(); ++i)
      os_ << (i ? ", " : "") << names_.of(lowered_.outputs[i].value);
    os_ << ") {\n";
    lines(lowered_.lines, "  ");
    os_ << "}\n";
    return os_.str();
  }

 private:
  std::string assignment(const Line& l) const {
    std::string s = names_.of(l.target);
    if (l.reshape) {
      s += " = reshape(" + names_.of(l.body->tensor);
      for (const ir::Dim& d : l.out) s += ", " + size_text(d.hi, fn_.name);
      return s + ")";
    }
    if (!l.out.empty()) {
      s += "(";
      for (size_t k = 0; k < l.out.size(); ++k)
        s += (k ? ", " : "") + names_.of_index(l.out[k].index);
      s += ")";
    }
    const std::string body = text_.body(l.body, l.statement_type);
    s += " " + l.op + " " + (l.declares_half ? "float16(" + body + ")" : body);
    std::string where;
    for (size_t k = 0; k < l.where.size(); ++k) {
      if (!l.where[k]) continue;
      const ir::Dim& d = k < l.out.size() ? l.out[k] : l.reduce[k - l.out.size()];
      where += std::string(where.empty() ? " where " : ", ") + names_.of_index(d.index) + " in " +
               size_text(d.lo, fn_.name) + ":" + size_text(d.hi, fn_.name);
    }
    return s + where;
  }

  void comments(const Line& l, const std::string& printed, const std::string& indent, bool first) {
    if (!options_.comments) return;
    std::vector<std::string> text;
    // A statement written over several lines is one comment line.
    if (!l.source.empty() && normalised(l.source) != normalised(printed))
      text.push_back(normalised(l.source));
    for (const std::string& a : l.attrs) text.push_back(a);
    if (text.empty()) return;
    if (!first) os_ << "\n";
    for (const std::string& t : text) os_ << indent << "# " << t << "\n";
  }

  void lines(const std::vector<Line>& ls, const std::string& indent) {
    for (size_t i = 0; i < ls.size(); ++i) {
      const Line& l = ls[i];
      if (l.kind == Line::Kind::Assign) {
        std::string printed = assignment(l);
        comments(l, printed, indent, i == 0);
        os_ << indent << printed << "\n";
        continue;
      }
      std::string head = "for " + names_.of_index(l.var) + " in 0:" + std::to_string(l.trip);
      comments(l, head, indent, i == 0);
      os_ << indent << head << " {\n";
      lines(l.body_lines, indent + "  ");
      os_ << indent << "}\n";
    }
  }

  const ir::Function& fn_;
  const Lowered& lowered_;
  const Names& names_;
  ExprText text_;
  const UnparseOptions& options_;
  std::ostringstream os_;
};

}  // namespace

std::string unparse(const ir::Function& fn, const UnparseOptions& options) {
  std::set<ValueKey> refused;
  Decisions decisions;
  // Every round's Lines stay alive: decisions hold addresses of expression
  // nodes and values, which a later round must not see reused.
  std::vector<std::unique_ptr<Lowered>> rounds;
  for (int round = 0;; ++round) {
    TENET_ASSERT(round < 100000, "unparse of " << fn.name << " does not settle");
    rounds.push_back(std::make_unique<Lowered>(lower_lines(fn, refused)));
    Lowered& lowered = *rounds.back();
    Names names = assign_names(fn, lowered);
    std::optional<Violation> v = replay(fn, lowered, names, decisions);
    if (!v) return Printer(fn, lowered, names, decisions, options).run();
    if (!v->value) continue;  // the replay added decisions; try again
    // The group of the value in question prints under one name, wrongly:
    // refuse every merge that built it.
    ValueKey root = lowered.groups.find(v->value);
    bool refused_one = false;
    for (const auto& [key, members] : lowered.merges) {
      for (ValueKey m : members) {
        if (lowered.groups.find(m) != root) continue;
        refused_one |= refused.insert(key).second;
        break;
      }
    }
    if (!refused_one)
      throw InternalError("unparse of '" + fn.name + "': " + v->why + " (" + v->value->name + ")");
  }
}

}  // namespace tenet::lang
