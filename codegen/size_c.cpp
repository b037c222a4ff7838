// SizeExpr -> C++. A SizeExpr keeps its structure private; its canonical text
// (SizeExpr::str) is a small grammar that we parse back here:
//
//   sum     := ['-'] term (('+' | '-') term)*
//   term    := factor (('*' | '/' INT) factor?)*     -- '/' is floor division
//   factor  := INT | NAME | '(' sum ')' | ('min' | 'max') '(' sum ',' sum ')'
//
// Reading structure back from text is only safe while the printer keeps it
// unambiguous, so every translation is checked by evaluating both forms on a
// few bindings: a change to the text form fails loudly here, never silently.
#include <cctype>
#include <memory>
#include <vector>

#include "codegen/c_text.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

struct SizeNode {
  enum Kind { Int, Name, Add, Sub, Neg, Mul, FloorDiv, Min, Max } kind;
  int64_t value = 0;  // Int, or the divisor of FloorDiv
  std::string name;   // Name
  std::vector<std::unique_ptr<SizeNode>> args;
};
using NodePtr = std::unique_ptr<SizeNode>;

NodePtr make(SizeNode::Kind kind, std::vector<NodePtr> args = {}) {
  auto n = std::make_unique<SizeNode>();
  n->kind = kind;
  n->args = std::move(args);
  return n;
}

class SizeTextParser {
 public:
  explicit SizeTextParser(const std::string& text) : text_(text) {}

  NodePtr parse() {
    NodePtr n = sum();
    skip_spaces();
    expect(pos_ == text_.size(), "trailing text");
    return n;
  }

 private:
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool accept(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(bool ok, const char* what) {
    TENET_ASSERT(ok, "cannot translate size expression '" << text_ << "' to C++: " << what
                                                          << " at offset " << pos_);
  }

  NodePtr sum() {
    NodePtr n = accept('-') ? make(SizeNode::Neg, vec(term())) : term();
    for (;;) {
      if (accept('+'))
        n = make(SizeNode::Add, vec(std::move(n), term()));
      else if (accept('-'))
        n = make(SizeNode::Sub, vec(std::move(n), term()));
      else
        return n;
    }
  }

  NodePtr term() {
    NodePtr n = factor();
    for (;;) {
      if (accept('*')) {
        n = make(SizeNode::Mul, vec(std::move(n), factor()));
      } else if (accept('/')) {
        NodePtr d = factor();
        expect(d->kind == SizeNode::Int && d->value > 0, "divisor is not a positive constant");
        n = make(SizeNode::FloorDiv, vec(std::move(n)));
        n->value = d->value;
      } else {
        return n;
      }
    }
  }

  NodePtr factor() {
    skip_spaces();
    expect(pos_ < text_.size(), "unexpected end");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      NodePtr n = make(SizeNode::Int);
      n->value = std::stoll(text_.substr(start, pos_ - start));
      return n;
    }
    if (accept('(')) {
      NodePtr n = sum();
      expect(accept(')'), "expected ')'");
      return n;
    }
    expect(std::isalpha(static_cast<unsigned char>(c)) || c == '_', "expected a name");
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    std::string name = text_.substr(start, pos_ - start);
    if ((name == "min" || name == "max") && accept('(')) {
      NodePtr a = sum();
      expect(accept(','), "expected ','");
      NodePtr b = sum();
      expect(accept(')'), "expected ')'");
      return make(name == "min" ? SizeNode::Min : SizeNode::Max, vec(std::move(a), std::move(b)));
    }
    NodePtr n = make(SizeNode::Name);
    n->name = name;
    return n;
  }

  template <typename... T>
  static std::vector<NodePtr> vec(T&&... nodes) {
    std::vector<NodePtr> v;
    (v.push_back(std::forward<T>(nodes)), ...);
    return v;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

int64_t evaluate(const SizeNode& n, const ir::SizeBindings& sizes) {
  auto arg = [&](int i) { return evaluate(*n.args[i], sizes); };
  switch (n.kind) {
    case SizeNode::Int:
      return n.value;
    case SizeNode::Name:
      return sizes.at(n.name);
    case SizeNode::Add:
      return arg(0) + arg(1);
    case SizeNode::Sub:
      return arg(0) - arg(1);
    case SizeNode::Neg:
      return -arg(0);
    case SizeNode::Mul:
      return arg(0) * arg(1);
    case SizeNode::FloorDiv: {
      int64_t a = arg(0), q = a / n.value;
      return (a % n.value != 0 && a < 0) ? q - 1 : q;
    }
    case SizeNode::Min:
      return std::min(arg(0), arg(1));
    case SizeNode::Max:
      return std::max(arg(0), arg(1));
  }
  return 0;
}

CExpr emit(const SizeNode& n, const NameMap& names) {
  auto arg = [&](int i) { return emit(*n.args[i], names); };
  switch (n.kind) {
    case SizeNode::Int:
      return CExpr{std::to_string(n.value), kPrecPrimary};
    case SizeNode::Name: {
      auto it = names.find(n.name);
      return CExpr{it == names.end() ? n.name : it->second, kPrecPrimary};
    }
    case SizeNode::Add:
      return CExpr{wrap(arg(0), kPrecAdditive) + " + " + wrap(arg(1), kPrecAdditive + 1),
                   kPrecAdditive};
    case SizeNode::Sub:
      return CExpr{wrap(arg(0), kPrecAdditive) + " - " + wrap(arg(1), kPrecAdditive + 1),
                   kPrecAdditive};
    case SizeNode::Neg:
      return CExpr{"-" + wrap(arg(0), kPrecUnary), kPrecUnary};
    case SizeNode::Mul:
      return CExpr{
          wrap(arg(0), kPrecMultiplicative) + " * " + wrap(arg(1), kPrecMultiplicative + 1),
          kPrecMultiplicative};
    case SizeNode::FloorDiv:
      return CExpr{"tenet::floordiv<int64_t>(" + arg(0).text + ", " + std::to_string(n.value) + ")",
                   kPrecPrimary};
    case SizeNode::Min:
      return CExpr{"std::min<int64_t>(" + arg(0).text + ", " + arg(1).text + ")", kPrecPrimary};
    case SizeNode::Max:
      return CExpr{"std::max<int64_t>(" + arg(0).text + ", " + arg(1).text + ")", kPrecPrimary};
  }
  return CExpr{};
}

}  // namespace

CExpr size_to_c(const ir::SizeExpr& e, const NameMap& size_names) {
  if (auto c = e.constant()) return literal(double(*c), ElemType::I64);
  const std::string text = e.str();
  NodePtr tree = SizeTextParser(text).parse();
  // Check the translation on bindings that exercise negative numerators and
  // odd values, where floor division and C++ '/' differ.
  for (int64_t base : {3, 7, 20, -5}) {
    ir::SizeBindings sizes;
    int64_t k = 0;
    for (const std::string& s : e.symbols()) sizes[s] = base + 2 * k++;
    TENET_ASSERT(evaluate(*tree, sizes) == e.eval(sizes),
                 "size expression '" << text << "' does not translate to C++ unambiguously");
  }
  return emit(*tree, size_names);
}

bool is_simple_size(const ir::SizeExpr& e) {
  return e.is_constant() || e.as_symbol();
}

}  // namespace tenet::codegen::detail
