/// \file
/// The parser of the IR's text form (ir_parser.h): functions, statements and
/// loops (ir_parser.cpp), statement annotations (ir_parser_annotations.cpp);
/// ExprParser (ir_parser_expr.h) for the rest of the grammar.
///
/// Internal to ir/.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"
#include "ir/ir.h"
#include "ir/ir_parser_expr.h"
#include "support/error.h"

namespace tenet::ir::detail {

class Parser : ExprParser {
 public:
  explicit Parser(const SourceFile& file) : ExprParser(file) {}

  Module module() {
    Module m;
    while (peek().kind != TokKind::End) {
      Span name_span = peek(1).span;
      Function f = function();
      if (m.find(f.name)) fail(name_span, "function '" + f.name + "' is defined twice");
      m.functions.push_back(std::move(f));
    }
    return m;
  }

 private:
  // Creates a value through the builder (which names it exactly: each name is
  // requested once) and defines it in the innermost scope.
  ValuePtr define(const Token& name, ElemType type, std::vector<SizeExpr> shape,
                  std::vector<int> layout) {
    if (!names_.insert(name.text).second) fail(name.span, "%" + name.text + " is defined twice");
    ValuePtr v = minter_->new_value(name.text, type, std::move(shape), name.span);
    TENET_ASSERT(v->name == name.text, "builder renamed " << name.text << " to " << v->name);
    if (!layout.empty()) v = with_layout(v, std::move(layout));
    scopes_.back()[name.text] = v;
    return v;
  }

  // ---- statements ----------------------------------------------------------------
  Function function();

  // return [%value [as NAME] {, %value [as NAME]}]: outputs and their user-facing names.
  void outputs(Function& f);
  void block(std::vector<Stmt>& body, const std::set<std::string>& loop_vars);
  Stmt statement(const std::set<std::string>& loop_vars);
  Dim reduce_dim(std::set<std::string>& bound);
  Compute compute(const std::set<std::string>& loop_vars);
  static std::string shape_text(const std::vector<SizeExpr>& shape) {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].str();
    return out;
  }

  // loop VAR in 0:TRIP [carry(%p = %init, ...)] { ... } [-> (%r = [next] %v, ...)]
  Loop loop(std::set<std::string> loop_vars);
  // A carried tensor (%p = %init) or a loop result (%r = [next] %v), as written.
  struct LoopTensor {
    const Token* name;
    std::vector<int> layout;
    ValuePtr value;        // %init, or %v
    bool carried = false;  // a result written `next %v`
  };
  // [carry(%p = %init, ...)]
  std::vector<LoopTensor> loop_carry();
  // [-> (%r = [next] %v, ...)]
  std::vector<LoopTensor> loop_results();

  // attrs( ... ): past the parenthesis that closes it.
  void skip_attrs();

  // ---- annotations (ir/annotations.h; docs/ir.md) ---------------------------------
  void annotations(Stmt& s, const std::set<std::string>& loop_vars);
  std::string string_token(const std::string& what);
  std::string value_name(const std::string& what);

  // '[' [item {, item}] ']'
  template <typename Item>
  void list(Item item) {
    expect("[", "to open the list");
    if (!is_punct("]")) {
      do item();
      while (accept(","));
    }
    expect("]", "to close the list");
  }

  std::vector<std::string> index_list();

  // scan = an out index of a reduction over one index: its position + 1.
  size_t scan_index(const Compute& c);

  // order = [outer out indices, reduce indices, inner out indices]: the number of inner ones.
  size_t inner_loops(const Token& key, const Compute& c, const std::vector<std::string>& order);

  // always|if WORK >= MIN [split(PRODUCT, gather [RANGES] BODY)] [for [LOOPS]] C = A * B
  std::shared_ptr<const GemmPlan> gemm(const Stmt& s, const std::set<std::string>& loop_vars);
  std::shared_ptr<const ConvPlan> conv(const Stmt& s);

  struct Matrix {
    Span at;
    std::string name;
    bool packed = false, transposed = false;
    std::vector<std::string> rows, cols;
  };

  // %x | pack(%x) | transposed(%x), then [ROWS : COLS]
  Matrix matrix();
  GemmMatrix gemm_matrix(const Matrix& m, const std::vector<Affine>& indices,
                         const std::vector<Dim>& rows, const std::vector<Dim>& cols);
  /// The dims of `from` named `names`; `at`: where the names are, for errors.
  std::vector<Dim> dims(const std::vector<std::string>& names, const std::vector<Dim>& from,
                        const char* what, Span at);

  // split(PRODUCT, gather [RANGES] BODY): the columns' statement, then the
  // gather of the statement's result from them.
  std::shared_ptr<const SplitGather> split(const Compute& statement,
                                           const std::set<std::string>& loop_vars);

  FunctionBuilder* minter_ = nullptr;
};

}  // namespace tenet::ir::detail
