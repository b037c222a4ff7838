#include "tests/ir/ir_samples.h"

#include <cmath>
#include <limits>

namespace tenet::ir::samples {

namespace {

SizeExpr S(const char* name) {
  return SizeExpr::sym(name);
}
Dim dim(const char* index, SizeExpr hi) {
  return Dim{index, SizeExpr(0), hi};
}
Dim dim(const char* index, SizeExpr lo, SizeExpr hi) {
  return Dim{index, lo, hi};
}

// A read whose indices are plain index names.
Expr at(const ValuePtr& v, std::initializer_list<const char*> indices, bool guarded = false) {
  std::vector<Affine> idx;
  for (const char* i : indices) idx.push_back(Affine::var(i));
  return make_read(v, idx, guarded);
}
Expr f32(double v) {
  return make_const(v, ElemType::F32);
}
Expr bin(BinOp op, Expr a, Expr b) {
  return make_binary(op, std::move(a), std::move(b));
}
Expr un(UnOp op, Expr a) {
  return make_unary(op, std::move(a));
}

}  // namespace

Function squash() {
  FunctionBuilder fb("squash");
  auto B = S("B"), N = S("N"), D = S("D");
  auto s = fb.input("s", ElemType::F32, {B, N, D});
  auto n2 = fb.compute("n2", {dim("b", B), dim("n", N)}, {dim("d", D)}, ReduceOp::Sum,
                       bin(BinOp::Mul, at(s, {"b", "n", "d"}), at(s, {"b", "n", "d"})), nullptr,
                       ElemType::F32, {}, "n2(b, n) +=! s(b, n, d) * s(b, n, d)");
  auto scale = bin(BinOp::Div, un(UnOp::Sqrt, bin(BinOp::Add, at(n2, {"b", "n"}), f32(1e-7))),
                   bin(BinOp::Add, f32(1), at(n2, {"b", "n"})));
  auto v = fb.compute("v", {dim("b", B), dim("n", N), dim("d", D)}, {}, ReduceOp::None,
                      bin(BinOp::Mul, at(s, {"b", "n", "d"}), scale), nullptr, ElemType::F32, {},
                      "v(b, n, d) = s(b, n, d) * sqrt(n2(b, n) + 1e-7) / (1 + n2(b, n))");
  fb.output(v);
  return fb.finish();
}

Function softmax() {
  FunctionBuilder fb("softmax_last");
  auto N = S("N"), K = S("K");
  auto z = fb.input("z", ElemType::F32, {N, K});
  auto m = fb.compute("m", {dim("n", N)}, {dim("k", K)}, ReduceOp::Max, at(z, {"n", "k"}));
  auto e = fb.compute("e", {dim("n", N), dim("k", K)}, {}, ReduceOp::None,
                      un(UnOp::Exp, bin(BinOp::Sub, at(z, {"n", "k"}), at(m, {"n"}))));
  auto t = fb.compute("t", {dim("n", N)}, {dim("k", K)}, ReduceOp::Sum, at(e, {"n", "k"}));
  auto p = fb.compute("p", {dim("n", N), dim("k", K)}, {}, ReduceOp::None,
                      bin(BinOp::Div, at(e, {"n", "k"}), at(t, {"n"})));
  fb.output(p);
  return fb.finish();
}

Function conv_stride2() {
  FunctionBuilder fb("conv_stride2");
  auto B = S("B"), C = S("C"), H = S("H"), W = S("W"), O = S("O");
  auto x = fb.input("x", ElemType::F32, {B, C, H, W});
  auto w = fb.input("w", ElemType::F32, {O, C, 3, 3});
  auto OH = SizeExpr::floordiv(H - 3, 2) + 1, OW = SizeExpr::floordiv(W - 3, 2) + 1;
  Affine row{{{"i", 2}, {"ki", 1}}, SizeExpr(0)}, col{{{"j", 2}, {"kj", 1}}, SizeExpr(0)};
  auto xr = make_read(x, {Affine::var("b"), Affine::var("c"), row, col});
  auto y = fb.compute("y", {dim("b", B), dim("o", O), dim("i", OH), dim("j", OW)},
                      {dim("c", C), dim("ki", 3), dim("kj", 3)}, ReduceOp::Sum,
                      bin(BinOp::Mul, xr, at(w, {"o", "c", "ki", "kj"})), nullptr, ElemType::F32,
                      {}, "y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)");
  fb.output(y);
  return fb.finish();
}

Function stencil() {
  FunctionBuilder fb("stencil");
  fb.size_param("N");
  fb.size_param("Unused");  // declared but in no shape: must survive the round trip
  auto N = S("N");
  auto x = fb.input("x", ElemType::F64, {N});
  auto acc = fb.input("acc", ElemType::F64, {N});
  Affine left{{{"i", 1}}, SizeExpr(-1)}, right{{{"i", 1}}, SizeExpr(1)};
  Affine mirrored{{{"i", -1}}, N - 1};  // x[N - 1 - i]
  auto smooth = fb.compute_auto(
      "smooth", {dim("i", N)}, {}, ReduceOp::None,
      bin(BinOp::Add, bin(BinOp::Add, make_read(x, {left}, true), make_read(x, {right}, true)),
          make_read(x, {mirrored})));
  // A window sum over [i, i + 3), added onto acc (init), guarded at the edge.
  Affine window{{{"i", 1}, {"k", 1}}, SizeExpr(0)};
  auto summed = fb.compute("acc", {dim("i", N)}, {dim("k", 0, 3)}, ReduceOp::Sum,
                           make_read(x, {window}, true), acc, ElemType::F64);
  auto lo = fb.compute("lo", {dim("i", N)}, {dim("k", 1, N - 1)}, ReduceOp::Min,
                       make_read(x, {Affine{{{"k", 1}}, SizeExpr(0)}}), smooth, ElemType::F64);
  auto hi = fb.compute("hi", {}, {dim("i", SizeExpr::min(N, 4))}, ReduceOp::Max, at(x, {"i"}),
                       nullptr, ElemType::F64);
  fb.output(summed, "window");  // a user-facing name other than the value's ("acc.1")
  fb.output(lo);
  fb.output(hi);
  return fb.finish();
}

Function mixed_types() {
  FunctionBuilder fb("mixed_types");
  auto N = S("N"), M = S("M");
  auto x = fb.input("x", ElemType::F32, {N, M});
  auto label = fb.input("label", ElemType::I64, {N});
  auto relu = fb.compute(
      "relu", {dim("n", N), dim("m", M)}, {}, ReduceOp::None,
      make_select(bin(BinOp::Gt, at(x, {"n", "m"}), f32(0)), at(x, {"n", "m"}), f32(-0.0)));
  // one-hot via comparisons of an int tensor with the Index m, and logic ops
  auto is_label = bin(BinOp::Eq, at(label, {"n"}), make_index("m"));
  auto in_range = bin(BinOp::And, bin(BinOp::Ge, make_index("m"), make_const(0, ElemType::I64)),
                      un(UnOp::Not, bin(BinOp::Ge, make_index("m"), make_size(M))));
  auto onehot =
      fb.compute("onehot", {dim("n", N), dim("m", M)}, {}, ReduceOp::None,
                 make_cast(make_select(bin(BinOp::Or, bin(BinOp::And, is_label, in_range),
                                           make_const(0, ElemType::Bool)),
                                       make_const(1, ElemType::I32), make_const(-7, ElemType::I32)),
                           ElemType::F32));
  // A scalar: mean over everything, computed in float64 then cast back.
  auto prod =
      make_cast(bin(BinOp::Mul, at(relu, {"n", "m"}), at(onehot, {"n", "m"})), ElemType::F64);
  auto total = fb.compute("total", {}, {dim("n", N), dim("m", M)}, ReduceOp::Sum, prod, nullptr,
                          ElemType::F64);
  auto count = make_cast(make_size(N * M), ElemType::F64);
  auto mean = fb.compute("mean", {}, {}, ReduceOp::None,
                         make_cast(bin(BinOp::Div, make_read(total, {}), count), ElemType::F32));
  auto odd =
      fb.compute("odd", {dim("n", N)}, {}, ReduceOp::None,
                 bin(BinOp::Add, un(UnOp::Abs, at(label, {"n"})), make_const(-3, ElemType::I64)),
                 nullptr, ElemType::I64);
  auto special = fb.compute(
      "special", {}, {}, ReduceOp::None,
      bin(BinOp::Add,
          bin(BinOp::Max, make_const(std::numeric_limits<double>::infinity(), ElemType::F32),
              make_const(-std::numeric_limits<double>::infinity(), ElemType::F32)),
          bin(BinOp::Min, make_const(std::nan(""), ElemType::F32),
              bin(BinOp::Pow, f32(0.1), f32(1.0 / 3.0)))));
  fb.output(mean);
  fb.output(odd);
  fb.output(special);
  fb.output(x);  // an input may be an output
  return fb.finish();
}

Function routing() {
  FunctionBuilder fb("routing");
  auto I = S("I"), J = S("J"), D = S("D");
  auto u = fb.input("u", ElemType::F32, {I, J, D});
  auto b0 = fb.compute("b", {dim("i", I), dim("j", J)}, {}, ReduceOp::None, f32(0));
  auto bias = fb.compute("bias", {dim("j", J)}, {}, ReduceOp::None, f32(0.5));
  fb.begin_loop("it", 3, {}, "for it in 0:3 {");
  auto b = fb.carry(b0, "b");
  auto keep = fb.carry(bias, "bias");
  auto c = fb.compute("c", {dim("i", I), dim("j", J)}, {}, ReduceOp::None,
                      un(UnOp::Sigmoid, at(b, {"i", "j"})));
  auto s = fb.compute("s", {dim("j", J), dim("d", D)}, {dim("i", I)}, ReduceOp::Sum,
                      bin(BinOp::Mul, at(c, {"i", "j"}), at(u, {"i", "j", "d"})));
  fb.annotations().saved = "reduction";
  // A nested loop that refines s twice; its loop variable is read as a value.
  fb.begin_loop("r", 2);
  auto s_in = fb.carry(s, "s");
  auto step = bin(BinOp::Mul, f32(0.5), make_cast(make_index("r"), ElemType::F32));
  auto s_next = fb.compute("s", {dim("j", J), dim("d", D)}, {}, ReduceOp::None,
                           bin(BinOp::Add, at(s_in, {"j", "d"}), step));
  auto refined = fb.end_loop({s_next}, {});
  auto agree = fb.compute("b", {dim("i", I), dim("j", J)}, {dim("d", D)}, ReduceOp::Sum,
                          bin(BinOp::Mul, at(u, {"i", "j", "d"}), at(refined[0], {"j", "d"})), b,
                          ElemType::F32, {}, "b(i, j) += u(i, j, d) * s(j, d)");
  auto after = fb.end_loop({agree, keep}, {c});
  auto v = fb.compute("v", {dim("j", J)}, {dim("i", I)}, ReduceOp::Sum,
                      bin(BinOp::Add, at(after[0], {"i", "j"}),
                          bin(BinOp::Add, at(after[2], {"i", "j"}), at(after[1], {"j"}))));
  fb.output(v);
  fb.output(after[0], "b");  // the final logits %b.3, known to users as b
  return fb.finish();
}

Function annotated() {
  FunctionBuilder fb("annotated");
  auto N = S("N"), M = S("M");
  auto a = fb.input("a", ElemType::F32, {N, M});
  auto weird = fb.compute("my value", {dim("n", N), dim("m", M)}, {}, ReduceOp::None,
                          un(UnOp::Tanh, at(a, {"n", "m"})), nullptr, ElemType::F32, {},
                          "first line\n  second line, indented\n\nafter a blank # hash");
  Annotations& notes = fb.annotations();
  notes.ad = AdOrigin::Backward;
  notes.ad_detail = "group \"1\"\ttab";  // escapes survive the round trip
  notes.inlined = {"odd name", "e.1"};
  notes.recomputed = {{"short", 1}, {"long", 4}};
  // A value with a transposed layout: set by a layout pass, never by the language.
  auto plain = fb.compute("t", {dim("m", M), dim("n", N)}, {}, ReduceOp::None,
                          un(UnOp::Neg, at(weird, {"n", "m"})));
  Function f = fb.finish();
  ValuePtr transposed = with_layout(plain, {1, 0});
  f.body.back().compute.result = transposed;
  f.outputs = {transposed};
  f.output_names = {"the output"};
  return f;
}

Module all() {
  Module m;
  for (auto make : {squash, softmax, conv_stride2, stencil, mixed_types, routing, annotated})
    m.functions.push_back(make());
  return m;
}

}  // namespace tenet::ir::samples
