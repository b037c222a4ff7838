// The parser's annotations (docs/ir.md, "Annotations"): read after the
// statement they describe, so that a GEMM plan can be checked against it.
#include <algorithm>
#include <optional>

#include "ir/ir_parser_internal.h"
#include "ir/scatter_form.h"

namespace tenet::ir::detail {

// attrs( ... ): past the parenthesis that closes it.
void Parser::skip_attrs() {
  next();
  const Span open = next().span;
  for (int depth = 1; depth > 0; next()) {
    if (peek().kind == TokKind::End) fail(open, "attrs(...) is not closed");
    depth += is_punct("(") ? 1 : is_punct(")") ? -1 : 0;
  }
}

// ---- annotations (ir/annotations.h; docs/ir.md) ---------------------------------
void Parser::annotations(Stmt& s, const std::set<std::string>& loop_vars) {
  next();
  next();
  Annotations& a = s.annotations;
  std::set<std::string> given;
  do {
    const Token& key = expect_ident(
        "an annotation (reshape, ad, gemm, conv, inlined, recomputed, saved, order, nest, jam, "
        "lanes)");
    if (!given.insert(key.text).second)
      fail(key.span, "annotation " + key.text + " is given twice");
    expect("=", "after the annotation's name");
    const bool compute = s.kind == StmtKind::Compute;
    if (!compute && key.text != "ad")
      fail(key.span, "a loop has no annotation " + key.text + " (only ad)");
    if (key.text == "reshape") {
      if (!is_word("true")) fail_here("'true'");
      next();
      a.reshape = true;
    } else if (key.text == "ad") {
      if (is_word("backward"))
        a.ad = AdOrigin::Backward;
      else if (is_word("unrolled"))
        a.ad = AdOrigin::Unrolled;
      else
        fail_here("'backward' or 'unrolled'");
      next();
      a.ad_detail = string_token("the note on the statement's origin");
    } else if (key.text == "gemm") {
      a.gemm = gemm(s, loop_vars);
    } else if (key.text == "conv") {
      a.conv = conv(s);
    } else if (key.text == "inlined") {
      list([&] { a.inlined.push_back(value_name("an inlined value")); });
    } else if (key.text == "recomputed") {
      list([&] {
        Recomputed r{value_name("a recomputed value"), 0};
        expect("(", "before the number of uses");
        r.uses = int_literal();
        if (!is_word("use") && !is_word("uses")) fail_here("'uses'");
        next();
        expect(")", "after the number of uses");
        a.recomputed.push_back(r);
      });
    } else if (key.text == "saved") {
      a.saved = string_token("why the value is saved");
    } else if (key.text == "order") {
      a.inner_loops = inner_loops(key, s.compute, index_list());
    } else if (key.text == "nest") {
      const std::vector<std::string> shared = index_list();
      for (size_t p = 0; p < shared.size(); ++p)
        if (p >= s.compute.out.size() || shared[p] != s.compute.out[p].index)
          fail(key.span, "nest must list leading out indices of the statement");
      a.nest = shared.size();
    } else if (key.text == "jam") {
      const Token& at = peek();
      a.jam = int_literal();
      if (a.jam < 2 || s.compute.out.empty() || s.compute.op == ReduceOp::None)
        fail(at.span, "jam must be a tile of at least 2 elements of a reduction's last out index");
    } else if (key.text == "lanes") {
      const Token& at = peek();
      a.lanes = int_literal();
      if (a.lanes < 2 || (a.lanes & (a.lanes - 1)) != 0 || !may_run_in_lanes(s.compute))
        fail(at.span,
             "lanes must be a power of two (at least 2) of a max, min or float32 sum "
             "reduction's last reduce index");
    } else if (key.text == "scan") {
      a.scan = scan_index(s.compute);
    } else {
      fail(key.span, "unknown annotation " + key.text +
                         " (known: reshape, ad, gemm, conv, inlined, recomputed, saved, order, "
                         "nest, jam, lanes, scan)");
    }
  } while (accept(","));
  expect(")", "to close attrs(...)");
}

// conv = forward | backward_data | backward_weights: the plan is the
// statement's own (ir/conv_plan.h), which must be a convolution of that role.
std::shared_ptr<const ConvPlan> Parser::conv(const Stmt& s) {
  const Token& role = peek();
  if (role.kind != TokKind::Ident) fail_here("forward, backward_data or backward_weights");
  std::optional<ConvPlan> plan = plan_convolution(s.compute);
  if (!plan) fail(role.span, "the statement is not a 2-D convolution (ir/conv_plan.h)");
  if (role.text != role_name(plan->role))
    fail(role.span, "the statement is a convolution's " + std::string(role_name(plan->role)) +
                        ", not " + role.text);
  next();
  return std::make_shared<const ConvPlan>(std::move(*plan));
}

std::string Parser::string_token(const std::string& what) {
  if (peek().kind != TokKind::String) fail_here(what + " as a quoted string");
  return next().text;
}

std::string Parser::value_name(const std::string& what) {
  if (peek().kind != TokKind::Value) fail_here(what);
  return next().text;
}

std::vector<std::string> Parser::index_list() {
  std::vector<std::string> out;
  list([&] { out.push_back(expect_ident("an index").text); });
  return out;
}

size_t Parser::scan_index(const Compute& c) {
  const Token& at = expect_ident("the scanned out index");
  for (size_t p = 0; p < c.out.size(); ++p)
    if (c.out[p].index == at.text && c.op != ReduceOp::None && c.reduce.size() == 1) return p + 1;
  fail(at.span, "scan must name an out index of a reduction over one index");
}

// order = [outer out indices, reduce indices, inner out indices]: the number of inner ones.
size_t Parser::inner_loops(const Token& key, const Compute& c,
                           const std::vector<std::string>& order) {
  size_t outer = 0;
  while (outer < order.size() && outer < c.out.size() && order[outer] == c.out[outer].index)
    ++outer;
  std::vector<std::string> expected;
  for (size_t p = 0; p < c.out.size(); ++p) {
    if (p == outer)
      for (const Dim& d : c.reduce) expected.push_back(d.index);
    expected.push_back(c.out[p].index);
  }
  if (c.reduce.empty() || outer == c.out.size() || order != expected)
    fail(key.span,
         "order must list the outer out indices, the reduce indices, then at least one inner "
         "out index, each group in the statement's order");
  return c.out.size() - outer;
}

// always|if WORK >= MIN [split(PRODUCT, gather [RANGES] BODY)] [for [LOOPS]] C = A * B
std::shared_ptr<const GemmPlan> Parser::gemm(const Stmt& s,
                                             const std::set<std::string>& loop_vars) {
  auto plan = std::make_shared<GemmPlan>();
  const Span at = peek().span;
  std::optional<SizeExpr> printed_work;
  if (is_word("always")) {
    next();
  } else if (is_word("if")) {
    next();
    printed_work = size("the GEMM's work (M*N*K)");
    expect(">", "after the GEMM's work");
    expect("=", "after the GEMM's work");
    plan->per_call_min_work = int_literal();
    if (plan->per_call_min_work <= 0) fail(span_from(at), "the least work must be positive");
  } else {
    fail_here("'always' or 'if WORK >= MIN'");
  }
  const Compute& statement = s.compute;
  if (statement.op != ReduceOp::Sum || statement.reduce.empty())
    fail(at, "a GEMM plan on a statement that is no sum");
  if (is_word("split") && is_punct("(", 1)) plan->split = split(statement, loop_vars);
  const Compute& product = plan->product(statement);
  if (is_word("for")) {
    next();
    const Span loops_at = peek().span;
    plan->loops = dims(index_list(), product.out, "an out index", loops_at);
  }
  const Matrix c = matrix(), a = (expect("=", "after the GEMM's result"), matrix()),
               b = (expect("*", "between the GEMM's factors"), matrix());
  if (c.rows != a.rows || a.cols != b.rows || b.cols != c.cols)
    fail(span_from(at), "the GEMM's matrices do not agree: C[m : n] = A[m : k] * B[k : n]");
  plan->m = dims(c.rows, product.out, "an out index", c.at);
  plan->n = dims(c.cols, product.out, "an out index", c.at);
  plan->k = dims(a.cols, product.reduce, "a reduce index", a.at);
  // M * N * K, multiplied as the contraction pass does (the text must match).
  plan->work = 1;
  for (const auto* group : {&plan->m, &plan->n, &plan->k}) {
    SizeExpr extent = 1;
    for (const Dim& d : *group) extent = extent * d.extent();
    plan->work = plan->work * extent;
  }
  if (printed_work && *printed_work != plan->work)
    fail(at, "the GEMM's work is " + plan->work.str() + ", not " + printed_work->str());
  if (c.name != product.result->name) fail(c.at, "the GEMM's result is %" + product.result->name);
  std::vector<Affine> out_position;
  for (const Dim& d : product.out) out_position.push_back(Affine::var(d.index));
  plan->c = gemm_matrix(c, out_position, plan->m, plan->n);
  const ExprNode& body = *product.body;
  if (body.kind != ExprKind::Binary || body.binop != BinOp::Mul ||
      body.args[0]->kind != ExprKind::Read || body.args[1]->kind != ExprKind::Read)
    fail(at, "a GEMM plan on a statement whose body is no product of two reads");
  // A is the factor of that name; when both are, the one that reads the rows.
  auto reads = [&](int factor, const std::vector<Dim>& group) {
    for (const Dim& d : group)
      for (const Affine& x : body.args[size_t(factor)]->indices)
        if (x.coef(d.index) != 0) return true;
    return false;
  };
  const std::string &x = body.args[0]->tensor->name, &y = body.args[1]->tensor->name;
  int a_factor =
      a.name == x && (b.name != y || a.name != b.name || reads(0, plan->m) || !reads(0, plan->n))
          ? 0
          : 1;
  if (a.name != body.args[size_t(a_factor)]->tensor->name ||
      b.name != body.args[size_t(1 - a_factor)]->tensor->name)
    fail(at, "the GEMM's factors are %" + x + " and %" + y);
  plan->a = gemm_matrix(a, body.args[size_t(a_factor)]->indices, plan->m, plan->k);
  plan->b = gemm_matrix(b, body.args[size_t(1 - a_factor)]->indices, plan->k, plan->n);
  plan->a.factor = a_factor;
  plan->b.factor = 1 - a_factor;
  return plan;
}

// %x | pack(%x) | transposed(%x), then [ROWS : COLS]
Parser::Matrix Parser::matrix() {
  Matrix m;
  m.at = peek().span;
  m.packed = is_word("pack") && is_punct("(", 1);
  m.transposed = is_word("transposed") && is_punct("(", 1);
  if (m.packed || m.transposed) {
    next();
    next();
  }
  m.name = value_name("a GEMM matrix (%x, pack(%x) or transposed(%x))");
  if (m.packed || m.transposed) expect(")", "after the matrix's tensor");
  expect("[", "before the matrix's rows");
  for (auto* group : {&m.rows, &m.cols}) {
    if (!is_punct(":") && !is_punct("]")) {
      do group->push_back(expect_ident("an index").text);
      while (accept(","));
    }
    if (group == &m.rows) expect(":", "between the matrix's rows and columns");
  }
  expect("]", "after the matrix's columns");
  return m;
}

GemmMatrix Parser::gemm_matrix(const Matrix& m, const std::vector<Affine>& indices,
                               const std::vector<Dim>& rows, const std::vector<Dim>& cols) {
  GemmMatrix out;
  out.packed = m.packed;
  out.transposed = m.transposed;
  if (!m.packed) out.ld_dim = gemm_leading_dim(indices, rows, cols, m.transposed);
  return out;
}

std::vector<Dim> Parser::dims(const std::vector<std::string>& names, const std::vector<Dim>& from,
                              const char* what, Span at) {
  std::vector<Dim> out;
  for (const std::string& name : names) {
    auto it = std::find_if(from.begin(), from.end(), [&](const Dim& d) { return d.index == name; });
    if (it == from.end()) fail(at, name + " is not " + what + " of the GEMM's statement");
    out.push_back(*it);
  }
  return out;
}

// split(PRODUCT, gather [RANGES] BODY): the columns' statement, then the
// gather of the statement's result from them.
std::shared_ptr<const SplitGather> Parser::split(const Compute& statement,
                                                 const std::set<std::string>& loop_vars) {
  next();
  next();
  auto out = std::make_shared<SplitGather>();
  if (peek().kind != TokKind::Value) fail_here("the statement of the split's columns");
  out->product = compute(loop_vars);
  expect(",", "after the split's columns");
  expect_word("gather", "before the split's gather");
  std::set<std::string> bound = loop_vars;
  for (const Dim& d : statement.out) bound.insert(d.index);
  Compute& gather = out->gather;
  gather.result = statement.result;
  gather.out = statement.out;
  gather.op = ReduceOp::Sum;
  gather.init = statement.init;
  expect("[", "before the gather's ranges");
  if (!is_punct("]")) {
    do gather.reduce.push_back(reduce_dim(bound));
    while (accept(","));
  }
  expect("]", "after the gather's ranges");
  const Span body_at = peek().span;
  gather.body = expr(bound, 0);
  if (gather.body->kind != ExprKind::Read || gather.body->tensor != out->product.result)
    fail(span_from(body_at), "the gather reads the split's columns, %" + out->product.result->name);
  scopes_.back().erase(out->product.result->name);
  expect(")", "to close split(...)");
  return out;
}

}  // namespace tenet::ir::detail
