// Visitors and mutators of IR (ir/mutator.h).
#include "ir/mutator.h"

#include <gtest/gtest.h>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/printer.h"

namespace tenet::ir {
namespace {

const SizeExpr N = SizeExpr::sym("N");

struct Tensors {
  ValuePtr x, y;
  Tensors() {
    FunctionBuilder fb("f");
    fb.size_param("N");
    x = fb.input("x", ElemType::F32, {N});
    y = fb.input("y", ElemType::F32, {N});
  }
};

Expr read(const ValuePtr& t, Affine a, bool guarded = false) {
  return make_read(t, {std::move(a)}, guarded);
}

Affine plus(const std::string& index, int64_t k) {
  return Affine::var(index) + affine_const(k);
}

/// Counts nodes by kind; reads only through visit_read.
struct Counter : ExprVisitor {
  int reads = 0, binaries = 0;
  void visit_read(const Expr&) override { ++reads; }
  void visit_binary(const Expr& e) override {
    ++binaries;
    visit_args(e);
  }
};

/// Doubles every float constant.
struct Doubler : ExprMutator {
  Expr mutate_const(const Expr& e) override {
    return is_float(e->type) ? make_const(2 * e->value, e->type) : e;
  }
};

TEST(Mutator, VisitorRecursesWhereNotOverridden) {
  Tensors t;
  const Expr e = make_binary(BinOp::Add, make_unary(UnOp::Exp, read(t.x, Affine::var("i"))),
                             make_select(make_const(1, ElemType::Bool), read(t.y, Affine::var("i")),
                                         read(t.x, plus("i", 1))));
  Counter c;
  c.visit(e);
  EXPECT_EQ(c.reads, 3);
  EXPECT_EQ(c.binaries, 1);
}

TEST(Mutator, RebuildsOnlyWhereAChildChanged) {
  Tensors t;
  const Expr left = make_unary(UnOp::Exp, read(t.x, Affine::var("i")));
  const Expr e = make_binary(BinOp::Mul, left, make_const(3, ElemType::F32));
  Doubler d;
  const Expr out = d.mutate(e);
  EXPECT_EQ(print(out), "mul(exp(%x[i]), 6:float32)");
  EXPECT_NE(out, e);
  EXPECT_EQ(out->args[0], left);    // the untouched operand is shared
  EXPECT_EQ(d.mutate(left), left);  // nothing to change: the same node
}

TEST(Mutator, SubstitutesIndicesInReadsAndValuesSimultaneously) {
  Tensors t;
  // x[i + 1] + float(j) with i -> j, j -> 2*i - 1
  const Expr e =
      make_binary(BinOp::Add, read(t.x, plus("i", 1)), make_cast(make_index("j"), ElemType::F32));
  const Expr out =
      substitute(e, {{"i", Affine::var("j")}, {"j", Affine::var("i") * 2 - affine_const(1)}});
  EXPECT_EQ(print(out), "add(%x[j + 1], cast<float32>(sub(mul(2:int64, i), 1:int64)))");
  EXPECT_EQ(substitute(e, {{"k", Affine::var("i")}}), e);
}

TEST(Mutator, ReplacesTensors) {
  Tensors t;
  const Expr e =
      make_binary(BinOp::Sub, read(t.x, Affine::var("i"), true), read(t.y, Affine::var("i")));
  const Expr out = replace_tensors(e, {{t.x.get(), t.y}});
  EXPECT_EQ(print(out), "sub(%y?[i], %y[i])");
  EXPECT_EQ(out->args[1], e->args[1]);
}

TEST(Mutator, TransformReplacesTopDownWithoutRevisiting) {
  Tensors t;
  const Expr e = make_unary(UnOp::Neg, make_unary(UnOp::Neg, read(t.x, Affine::var("i"))));
  int calls = 0;
  const Expr out = transform(e, [&](const Expr& x) -> Expr {
    ++calls;
    if (x->kind == ExprKind::Unary) return x->args[0];  // drops the outer neg only
    return nullptr;
  });
  EXPECT_EQ(print(out), "neg(%x[i])");
  EXPECT_EQ(calls, 1);
}

TEST(Mutator, FindsNodesAndReads) {
  Tensors t;
  const Expr e =
      make_binary(BinOp::Mul, read(t.x, Affine::var("i")),
                  make_binary(BinOp::Add, read(t.y, Affine::var("i")), read(t.x, plus("i", 2))));
  const std::vector<Expr> all = reads_of(e), of_x = reads_of(e, t.x.get());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1]->tensor, t.y);  // evaluation order
  ASSERT_EQ(of_x.size(), 2u);
  EXPECT_EQ(print(of_x[1]), "%x[i + 2]");
  EXPECT_TRUE(any_node(
      e, [](const Expr& x) { return x->kind == ExprKind::Binary && x->binop == BinOp::Add; }));
  EXPECT_FALSE(any_node(e, [](const Expr& x) { return x->kind == ExprKind::Index; }));
  int nodes = 0;
  for_each_node(e, [&](const Expr&) { ++nodes; });
  EXPECT_EQ(nodes, 5);
}

// Total: finite operands give a finite value (no pole, no domain error).
TEST(Mutator, TotalExpressionsHaveNoDivisionPowLogOrSqrt) {
  Tensors t;
  const Expr x = read(t.x, Affine::var("i")), y = read(t.y, Affine::var("i"));
  EXPECT_TRUE(is_total(make_binary(BinOp::Mul, x, make_unary(UnOp::Exp, y))));
  EXPECT_TRUE(is_total(make_binary(BinOp::Max, x, make_unary(UnOp::Tanh, y))));
  for (BinOp op : {BinOp::Div, BinOp::Pow})
    EXPECT_FALSE(is_total(make_binary(BinOp::Add, x, make_binary(op, x, y)))) << op_name(op);
  for (UnOp op : {UnOp::Log, UnOp::Sqrt})
    EXPECT_FALSE(is_total(make_binary(BinOp::Mul, x, make_unary(op, y)))) << op_name(op);
}

Function looped() {
  FunctionBuilder fb("g");
  fb.size_param("N");
  ValuePtr x = fb.input("x", ElemType::F32, {N});
  ValuePtr a = fb.compute("a", {{"i", 0, N}}, {}, ReduceOp::None, read(x, Affine::var("i")));
  fb.begin_loop("t", 3);
  ValuePtr s = fb.carry(a, "s");
  fb.begin_loop("u", 2);
  ValuePtr r = fb.carry(s, "r");
  ValuePtr r2 =
      fb.compute("r2", {{"i", 0, N}}, {}, ReduceOp::None,
                 make_binary(BinOp::Add, read(r, Affine::var("i")), make_const(1, ElemType::F32)));
  ValuePtr inner = fb.end_loop({r2}, {})[0];
  ValuePtr s2 = fb.compute("s2", {{"i", 0, N}}, {}, ReduceOp::None, read(inner, Affine::var("i")));
  ValuePtr out = fb.end_loop({s2}, {})[0];
  fb.output(out);
  return fb.finish();
}

/// Records each compute with the loop variables around it; duplicates the innermost ones.
struct Recorder : StmtMutator {
  std::vector<std::string> loops, seen;
  void mutate_compute(Stmt& s, std::vector<Stmt>& out) override {
    std::string where;
    for (const std::string& l : loops) where += l + "/";
    seen.push_back(where + s.compute.result->name);
    out.push_back(std::move(s));
  }
  void enter_loop(const Loop& l) override { loops.push_back(l.var); }
  void leave_loop(const Loop&) override { loops.pop_back(); }
};

TEST(Mutator, StatementsInLoopBodies) {
  Function f = looped();
  Recorder r;
  r.mutate_block(f.body);
  EXPECT_EQ(r.seen, (std::vector<std::string>{"a", "t/u/r2", "t/s2"}));
  EXPECT_TRUE(r.loops.empty());
  std::vector<std::string> order;
  for_each_stmt(f.body, [&](const Stmt& s) {
    order.push_back(s.kind == StmtKind::Loop ? "loop " + s.loop->var : s.compute.result->name);
  });
  EXPECT_EQ(order, (std::vector<std::string>{"a", "loop t", "loop u", "r2", "s2"}));
}

TEST(Mutator, ReadTextAsTheLanguageWritesIt) {
  Tensors t;
  EXPECT_EQ(read_text(*make_read(t.x, {Affine::var("i") * 2 + Affine::var("k") - affine_const(1)})),
            "x(2*i + k - 1)");
  EXPECT_EQ(read_text(*read(t.y, affine_const(N - 1), true)), "y?(N - 1)");
}

}  // namespace
}  // namespace tenet::ir
