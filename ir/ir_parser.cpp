#include "ir/ir_parser.h"

#include <algorithm>
#include <optional>

#include "ir/builder.h"
#include "ir/gemm_plan.h"
#include "ir/ir_parser_expr.h"
#include "ir/verify.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

// The reductions' keywords in the text form.
bool reduce_keyword(const std::string& word, ReduceOp& op) {
  for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min})
    if (word == op_name(r)) return op = r, true;
  return false;
}

// Functions, statements and loops; see ExprParser for the rest of the grammar.
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
    if (!layout.empty()) {
      auto with_layout = std::make_shared<Value>(*v);
      with_layout->layout = std::move(layout);
      v = with_layout;
    }
    scopes_.back()[name.text] = v;
    return v;
  }

  // ---- statements ----------------------------------------------------------------
  Function function() {
    expect_word("func", "to start a function");
    Function f;
    const Token& name = next();
    if (name.kind != TokKind::Ident && name.kind != TokKind::String)
      fail(name.span, "expected a function name, found " + describe(name));
    f.name = name.text;
    f.span = name.span;
    FunctionBuilder minter(f.name, f.span);
    minter_ = &minter;
    scopes_.assign(1, {});
    names_.clear();
    size_params_.clear();
    try {
      if (accept("[")) {
        do {
          const Token& s = expect_ident("a size parameter name");
          if (!size_params_.insert(s.text).second)
            fail(s.span, "size parameter " + s.text + " is listed twice");
          f.size_params.push_back(s.text);
        } while (accept(","));
        expect("]", "to close the size parameters");
      }
      expect("(", "before the inputs");
      if (!is_punct(")")) {
        do {
          if (peek().kind != TokKind::Value) fail_here("an input such as %x: float32[N]");
          const Token& in = next();
          expect(":", "after the input's name");
          TypeSpec t = type_spec();
          f.inputs.push_back(define(in, t.type, t.shape, t.layout));
        } while (accept(","));
      }
      expect(")", "after the inputs");
      expect("{", "to open the function body");
      block(f.body, {});
      expect_word("return", "to end the function body");
      outputs(f);
      expect("}", "to close the function");
      verify(f, "parsing " + file_.path());
    } catch (const InternalError& e) {
      fail(f.span, std::string("invalid IR in function ") + f.name + ": " + e.what());
    }
    minter_ = nullptr;
    return f;
  }

  // return [%value [as NAME] {, %value [as NAME]}]: outputs and their user-facing names.
  void outputs(Function& f) {
    if (peek().kind != TokKind::Value) return;
    do {
      if (peek().kind != TokKind::Value) fail_here("an output value");
      const Token& out = next();
      auto it = scopes_[0].find(out.text);
      if (it == scopes_[0].end())
        fail(out.span, "output %" + out.text + " is not defined at the function's top level");
      const Token* name = &out;
      if (is_word("as")) {
        next();
        name = &next();
        if (name->kind != TokKind::Ident && name->kind != TokKind::String)
          fail(name->span, "expected the output's name after 'as', found " + describe(*name));
      }
      for (const std::string& taken : f.output_names)
        if (taken == name->text) fail(name->span, "output name " + taken + " is used twice");
      for (const ValuePtr& in : f.inputs)
        if (in->name == name->text && in != it->second)
          fail(name->span, "output name " + in->name + " is the name of an input");
      f.outputs.push_back(it->second);
      f.output_names.push_back(name->text);
    } while (accept(","));
  }

  void block(std::vector<Stmt>& body, const std::set<std::string>& loop_vars) {
    while (!is_punct("}") && !is_word("return") && peek().kind != TokKind::End)
      body.push_back(statement(loop_vars));
  }

  Stmt statement(const std::set<std::string>& loop_vars) {
    Stmt s;
    Span begin = peek().span;
    std::vector<std::string> source = peek().comments;
    // The annotations are read once the statement they describe is known.
    std::optional<size_t> attrs_at;
    if (is_word("attrs") && is_punct("(", 1)) {
      attrs_at = pos_;
      skip_attrs();
      source.insert(source.end(), peek().comments.begin(), peek().comments.end());
    }
    for (size_t i = 0; i < source.size(); ++i) s.source += (i ? "\n" : "") + source[i];
    if (is_word("loop")) {
      if (int(loop_vars.size()) >= kMaxNesting) fail(peek().span, "loops nested too deeply");
      s.kind = StmtKind::Loop;
      s.loop = std::make_shared<Loop>(loop(loop_vars));
    } else if (peek().kind == TokKind::Value) {
      s.kind = StmtKind::Compute;
      s.compute = compute(loop_vars);
    } else {
      fail_here("a statement (%name[...]: type = ..., or loop), 'return' or '}'");
    }
    s.span = span_from(begin);
    if (attrs_at) {
      const size_t end = pos_;
      const uint32_t last_end = last_end_;
      pos_ = *attrs_at;
      annotations(s, loop_vars);
      pos_ = end;
      last_end_ = last_end;
    }
    return s;
  }

  // attrs( ... ): past the parenthesis that closes it.
  void skip_attrs() {
    next();
    const Span open = next().span;
    for (int depth = 1; depth > 0; next()) {
      if (peek().kind == TokKind::End) fail(open, "attrs(...) is not closed");
      depth += is_punct("(") ? 1 : is_punct(")") ? -1 : 0;
    }
  }

  // ---- annotations (ir/annotations.h; docs/ir.md) ---------------------------------
  void annotations(Stmt& s, const std::set<std::string>& loop_vars) {
    next();
    next();
    Annotations& a = s.annotations;
    std::set<std::string> given;
    do {
      const Token& key =
          expect_ident("an annotation (ad, gemm, inlined, recomputed, saved, order, nest)");
      if (!given.insert(key.text).second)
        fail(key.span, "annotation " + key.text + " is given twice");
      expect("=", "after the annotation's name");
      const bool compute = s.kind == StmtKind::Compute;
      if (!compute && key.text != "ad")
        fail(key.span, "a loop has no annotation " + key.text + " (only ad)");
      if (key.text == "ad") {
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
      } else {
        fail(key.span, "unknown annotation " + key.text +
                           " (known: ad, gemm, inlined, recomputed, saved, order, nest)");
      }
    } while (accept(","));
    expect(")", "to close attrs(...)");
  }

  std::string string_token(const std::string& what) {
    if (peek().kind != TokKind::String) fail_here(what + " as a quoted string");
    return next().text;
  }

  std::string value_name(const std::string& what) {
    if (peek().kind != TokKind::Value) fail_here(what);
    return next().text;
  }

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

  std::vector<std::string> index_list() {
    std::vector<std::string> out;
    list([&] { out.push_back(expect_ident("an index").text); });
    return out;
  }

  // order = [outer out indices, reduce indices, inner out indices]: the number of inner ones.
  size_t inner_loops(const Token& key, const Compute& c, const std::vector<std::string>& order) {
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
  std::shared_ptr<const GemmPlan> gemm(const Stmt& s, const std::set<std::string>& loop_vars) {
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
      plan->loops = dims(index_list(), product.out, "an out index");
    }
    const Matrix c = matrix(), a = (expect("=", "after the GEMM's result"), matrix()),
                 b = (expect("*", "between the GEMM's factors"), matrix());
    if (c.rows != a.rows || a.cols != b.rows || b.cols != c.cols)
      fail(span_from(at), "the GEMM's matrices do not agree: C[m : n] = A[m : k] * B[k : n]");
    plan->m = dims(c.rows, product.out, "an out index");
    plan->n = dims(c.cols, product.out, "an out index");
    plan->k = dims(a.cols, product.reduce, "a reduce index");
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

  struct Matrix {
    Span at;
    std::string name;
    bool packed = false, transposed = false;
    std::vector<std::string> rows, cols;
  };

  // %x | pack(%x) | transposed(%x), then [ROWS : COLS]
  Matrix matrix() {
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

  GemmMatrix gemm_matrix(const Matrix& m, const std::vector<Affine>& indices,
                         const std::vector<Dim>& rows, const std::vector<Dim>& cols) {
    GemmMatrix out;
    out.packed = m.packed;
    out.transposed = m.transposed;
    if (!m.packed) out.ld_dim = gemm_leading_dim(indices, rows, cols, m.transposed);
    return out;
  }

  std::vector<Dim> dims(const std::vector<std::string>& names, const std::vector<Dim>& from,
                        const char* what) {
    std::vector<Dim> out;
    for (const std::string& name : names) {
      auto it =
          std::find_if(from.begin(), from.end(), [&](const Dim& d) { return d.index == name; });
      if (it == from.end())
        fail(peek().span, name + " is not " + what + " of the GEMM's statement");
      out.push_back(*it);
    }
    return out;
  }

  // split(PRODUCT, gather [RANGES] BODY): the columns' statement, then the
  // gather of the statement's result from them.
  std::shared_ptr<const SplitGather> split(const Compute& statement,
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
      fail(span_from(body_at),
           "the gather reads the split's columns, %" + out->product.result->name);
    scopes_.back().erase(out->product.result->name);
    expect(")", "to close split(...)");
    return out;
  }

  Dim reduce_dim(std::set<std::string>& bound) {
    const Token& index = expect_ident("a reduction index");
    if (!bound.insert(index.text).second)
      fail(index.span, "index " + index.text + " is bound twice in this statement");
    expect_word("in", "after the reduction index");
    SizeExpr lo = size("a reduction range");
    expect(":", "between the bounds of the range");
    SizeExpr hi = size("a reduction range");
    return Dim{index.text, lo, hi};
  }

  Compute compute(const std::set<std::string>& loop_vars) {
    const Token& name = next();
    Compute c;
    std::set<std::string> bound = loop_vars;
    std::vector<const Token*> out_names;
    expect("[", "after the result's name (its out indices, even if none)");
    if (!is_punct("]")) {
      do {
        const Token& index = expect_ident("an out index");
        if (!bound.insert(index.text).second)
          fail(index.span, "index " + index.text + " is bound twice in this statement");
        out_names.push_back(&index);
      } while (accept(","));
    }
    expect("]", "after the out indices");
    expect(":", "and the result's type");
    Span type_at = peek().span;
    TypeSpec type = type_spec();
    if (out_names.size() != type.shape.size())
      fail(span_from(type_at), std::to_string(out_names.size()) + " out indices for a rank " +
                                   std::to_string(type.shape.size()) + " result");
    for (size_t i = 0; i < out_names.size(); ++i)
      c.out.push_back(Dim{out_names[i]->text, SizeExpr(0), type.shape[i]});
    expect("=", "after the result's type");
    if (peek().kind == TokKind::Ident && is_punct("[", 1) && reduce_keyword(peek().text, c.op)) {
      next();
      next();
      if (!is_punct("]")) {
        do c.reduce.push_back(reduce_dim(bound));
        while (accept(","));
      }
      expect("]", "to close the reduction ranges");
      if (c.out.size() + c.reduce.size() > size_t(kMaxIndices))
        fail(span_from(type_at), std::to_string(c.out.size() + c.reduce.size()) +
                                     " indices, the limit is " + std::to_string(kMaxIndices));
      if (is_word("init") && is_punct("(", 1)) {
        next();
        next();
        if (peek().kind != TokKind::Value) fail_here("the init value");
        const Token& init = next();
        c.init = lookup(init);
        if (c.init->type != type.type || c.init->shape != type.shape)
          fail(init.span, "init %" + c.init->name + " is " + std::string(type_name(c.init->type)) +
                              "[" + shape_text(c.init->shape) + "], the result is " +
                              std::string(type_name(type.type)) + "[" + shape_text(type.shape) +
                              "]");
        expect(")", "to close init(...)");
      }
    }
    Span body_at = peek().span;
    c.body = expr(bound, 0);
    if (c.body->type != type.type)
      fail(span_from(body_at), "the body has type " + std::string(type_name(c.body->type)) +
                                   ", the result is " + std::string(type_name(type.type)));
    c.result = define(name, type.type, type.shape, type.layout);
    return c;
  }

  static std::string shape_text(const std::vector<SizeExpr>& shape) {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].str();
    return out;
  }

  // loop VAR in 0:TRIP [carry(%p = %init, ...)] { ... } [-> (%r = [next] %v, ...)]
  Loop loop(std::set<std::string> loop_vars) {
    next();
    Loop l;
    const Token& var = expect_ident("the loop variable");
    if (!loop_vars.insert(var.text).second)
      fail(var.span, "loop variable " + var.text + " shadows an enclosing one");
    l.var = var.text;
    expect_word("in", "after the loop variable");
    Span range_at = peek().span;
    auto lo = size("a loop range").constant();
    expect(":", "between the bounds of the loop range");
    auto trip = size("a loop range").constant();
    if (!lo || *lo != 0 || !trip || *trip <= 0)
      fail(span_from(range_at), "a loop runs over 0:N with a constant N > 0");
    l.trip = *trip;
    std::vector<std::pair<const Token*, std::vector<int>>> params;
    std::vector<ValuePtr> inits;
    if (is_word("carry") && is_punct("(", 1)) {
      next();
      next();
      do {
        if (peek().kind != TokKind::Value) fail_here("a carried tensor (%param = %init)");
        const Token& p = next();
        std::vector<int> layout = layout_suffix();
        expect("=", "after the carried tensor's name");
        if (peek().kind != TokKind::Value) fail_here("the carried tensor's initial value");
        inits.push_back(lookup(next()));
        params.push_back({&p, layout});
      } while (accept(","));
      expect(")", "to close carry(...)");
    }
    scopes_.emplace_back();
    std::vector<ValuePtr> param_values;
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& layout = params[i].second;
      check_layout(layout, inits[i]->rank(), params[i].first->span);
      param_values.push_back(define(*params[i].first, inits[i]->type, inits[i]->shape, layout));
    }
    expect("{", "to open the loop body");
    block(l.body, loop_vars);
    expect("}", "to close the loop body");
    struct Exit {
      const Token* result;
      std::vector<int> layout;
      ValuePtr next;
      bool carried;
    };
    std::vector<Exit> exits;
    if (accept("->")) {
      expect("(", "before the loop's results");
      do {
        if (peek().kind != TokKind::Value) fail_here("a loop result (%result = [next] %value)");
        const Token& r = next();
        std::vector<int> layout = layout_suffix();
        expect("=", "after the loop result's name");
        bool carried = is_word("next") && peek(1).kind == TokKind::Value;
        if (carried) next();
        if (peek().kind != TokKind::Value) fail_here("the value the loop result takes");
        exits.push_back(Exit{&r, layout, lookup(next()), carried});
      } while (accept(","));
      expect(")", "to close the loop's results");
    }
    scopes_.pop_back();
    size_t k = 0;
    for (const Exit& e : exits) {
      Loop::Carried c{nullptr, nullptr, e.next, nullptr};
      if (e.carried) {
        if (k == param_values.size())
          fail(e.result->span, "more 'next' results than carried tensors");
        c.init = inits[k];
        c.param = param_values[k++];
        if (c.next->type != c.param->type || c.next->shape != c.param->shape)
          fail(e.result->span, "%" + c.next->name + " differs in type or shape from %" +
                                   c.param->name + ", the tensor it carries");
      }
      check_layout(e.layout, c.next->rank(), e.result->span);
      c.result = define(*e.result, c.next->type, c.next->shape, e.layout);
      l.carried.push_back(c);
    }
    if (k != param_values.size())
      fail(span_from(var.span),
           "carried tensor %" + param_values[k]->name + " has no '= next %value' result");
    return l;
  }

  FunctionBuilder* minter_ = nullptr;
};

}  // namespace

Module parse_ir(const SourceFile& file) {
  return Parser(file).module();
}

}  // namespace tenet::ir
