#include "ir/ir_parser.h"

#include <optional>

#include "ir/ir_parser_internal.h"
#include "ir/verify.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

// The reductions' keywords in the text form.
bool reduce_keyword(const std::string& word, ReduceOp& op) {
  for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod})
    if (word == op_name(r)) return op = r, true;
  return false;
}

}  // namespace

namespace detail {

Function Parser::function() {
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

// return [output {, output}], output = %value [as NAME] [gradient of %input]:
// outputs, their user-facing names and the inputs they are gradients of.
void Parser::outputs(Function& f) {
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
      if (in->name == name->text && in != it->second &&
          (in->type != it->second->type || in->shape != it->second->shape))
        fail(name->span, "output name " + in->name +
                             " is the name of an input of another type or shape (an output "
                             "named like an input updates it)");
    int gradient_of = -1;
    if (is_word("gradient")) {
      next();
      expect_word("of", "after 'gradient'");
      const Token& in = next();
      for (size_t k = 0; k < f.inputs.size() && gradient_of < 0; ++k)
        if (in.kind == TokKind::Value && f.inputs[k]->name == in.text) gradient_of = int(k);
      if (gradient_of < 0)
        fail(in.span, "expected an input after 'gradient of', found " + describe(in));
    }
    f.outputs.push_back(it->second);
    f.output_names.push_back(name->text);
    if (gradient_of >= 0 && f.gradient_inputs.empty())
      f.gradient_inputs.assign(f.outputs.size() - 1, -1);
    if (!f.gradient_inputs.empty()) f.gradient_inputs.push_back(gradient_of);
  } while (accept(","));
}

void Parser::block(std::vector<Stmt>& body, const std::set<std::string>& loop_vars) {
  while (!is_punct("}") && !is_word("return") && peek().kind != TokKind::End)
    body.push_back(statement(loop_vars));
}

Stmt Parser::statement(const std::set<std::string>& loop_vars) {
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

Dim Parser::reduce_dim(std::set<std::string>& bound) {
  const Token& index = expect_ident("a reduction index");
  if (!bound.insert(index.text).second)
    fail(index.span, "index " + index.text + " is bound twice in this statement");
  expect_word("in", "after the reduction index");
  SizeExpr lo = size("a reduction range");
  expect(":", "between the bounds of the range");
  SizeExpr hi = size("a reduction range");
  return Dim{index.text, lo, hi};
}

Compute Parser::compute(const std::set<std::string>& loop_vars) {
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
                            std::string(type_name(type.type)) + "[" + shape_text(type.shape) + "]");
      expect(")", "to close init(...)");
    }
  }
  Span body_at = peek().span;
  c.body = expr(bound, 0);
  if (c.body->type != compute_type(type.type))  // a float16 result has a float32 body
    fail(span_from(body_at),
         "the body has type " + std::string(type_name(c.body->type)) + ", the result is " +
             std::string(type_name(type.type)) +
             (type.type == ElemType::F16 ? " (computed in float32: the body is float32)" : ""));
  c.result = define(name, type.type, type.shape, type.layout);
  return c;
}

// loop VAR in 0:TRIP [carry(%p = %init, ...)] { ... } [-> (%r = [next] %v, ...)]
Loop Parser::loop(std::set<std::string> loop_vars) {
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
  const std::vector<LoopTensor> params = loop_carry();
  scopes_.emplace_back();
  std::vector<ValuePtr> param_values;
  for (const LoopTensor& p : params) {
    check_layout(p.layout, p.value->rank(), p.name->span);
    param_values.push_back(define(*p.name, p.value->type, p.value->shape, p.layout));
  }
  expect("{", "to open the loop body");
  block(l.body, loop_vars);
  expect("}", "to close the loop body");
  const std::vector<LoopTensor> exits = loop_results();
  scopes_.pop_back();
  size_t k = 0;
  for (const LoopTensor& e : exits) {
    Loop::Carried c{nullptr, nullptr, e.value, nullptr};
    if (e.carried) {
      if (k == param_values.size()) fail(e.name->span, "more 'next' results than carried tensors");
      c.init = params[k].value;
      c.param = param_values[k++];
      if (c.next->type != c.param->type || c.next->shape != c.param->shape)
        fail(e.name->span, "%" + c.next->name + " differs in type or shape from %" + c.param->name +
                               ", the tensor it carries");
    }
    check_layout(e.layout, c.next->rank(), e.name->span);
    c.result = define(*e.name, c.next->type, c.next->shape, e.layout);
    l.carried.push_back(c);
  }
  if (k != param_values.size())
    fail(span_from(var.span),
         "carried tensor %" + param_values[k]->name + " has no '= next %value' result");
  return l;
}

// [carry(%p = %init, ...)]
std::vector<Parser::LoopTensor> Parser::loop_carry() {
  std::vector<LoopTensor> params;
  if (!is_word("carry") || !is_punct("(", 1)) return params;
  next();
  next();
  do {
    if (peek().kind != TokKind::Value) fail_here("a carried tensor (%param = %init)");
    const Token& p = next();
    std::vector<int> layout = layout_suffix();
    expect("=", "after the carried tensor's name");
    if (peek().kind != TokKind::Value) fail_here("the carried tensor's initial value");
    params.push_back({&p, layout, lookup(next())});
  } while (accept(","));
  expect(")", "to close carry(...)");
  return params;
}

// [-> (%r = [next] %v, ...)]
std::vector<Parser::LoopTensor> Parser::loop_results() {
  std::vector<LoopTensor> exits;
  if (!accept("->")) return exits;
  expect("(", "before the loop's results");
  do {
    if (peek().kind != TokKind::Value) fail_here("a loop result (%result = [next] %value)");
    const Token& r = next();
    std::vector<int> layout = layout_suffix();
    expect("=", "after the loop result's name");
    bool carried = is_word("next") && peek(1).kind == TokKind::Value;
    if (carried) next();
    if (peek().kind != TokKind::Value) fail_here("the value the loop result takes");
    exits.push_back({&r, layout, lookup(next()), carried});
  } while (accept(","));
  expect(")", "to close the loop's results");
  return exits;
}

}  // namespace detail

Module parse_ir(const SourceFile& file) {
  return detail::Parser(file).module();
}

}  // namespace tenet::ir
