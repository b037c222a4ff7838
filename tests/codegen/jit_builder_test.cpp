// Compiled code against the interpreter for IR the front end does not write
// (yet): every way a loop can hand a carried tensor to the next iteration,
// reductions from an init, outputs that are inputs or repeated, and names
// that are not C++ identifiers.
#include <gtest/gtest.h>

#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/builder.h"
#include "jit/jit.h"
#include "tests/codegen/codegen_test_util.h"

namespace tenet::codegen::testing {
namespace {

using ir::Affine;
using ir::ReduceOp;
using ir::SizeExpr;
using ir::ValuePtr;
using tenet::ElemType;

ir::Expr at(const ValuePtr& t, const std::string& i) {
  return ir::make_read(t, {Affine::var(i)});
}
ir::Expr f32(double v) {
  return ir::make_const(v, ElemType::F32);
}
ir::Expr add(ir::Expr a, ir::Expr b) {
  return ir::make_binary(ir::BinOp::Add, a, b);
}
ir::Expr mul(ir::Expr a, ir::Expr b) {
  return ir::make_binary(ir::BinOp::Mul, a, b);
}

/// A loop whose carried tensors move in every way the backend distinguishes:
/// swapped with each other (copies), unchanged, replaced by a value from
/// before the loop (aliased), computed in the body into alternating buffers
/// (two carried tensors sharing one next value), and the result of a nested
/// loop (copied); plus live-outs of a body value and of a parameter.
ir::Function loop_kinds() {
  ir::FunctionBuilder fb("loop_kinds");
  SizeExpr N = SizeExpr::sym("N");
  ValuePtr x = fb.input("x", ElemType::F32, {N});
  std::vector<ir::Dim> i = {{"i", 0, N}};
  ValuePtr a0 = fb.compute("a", i, {}, ReduceOp::None, at(x, "i"));
  ValuePtr b0 = fb.compute("b", i, {}, ReduceOp::None, mul(f32(2), at(x, "i")));
  ValuePtr c0 = fb.compute("c", i, {}, ReduceOp::None, add(at(x, "i"), f32(1)));
  fb.begin_loop("it", 4);
  ValuePtr a = fb.carry(a0, "a");
  ValuePtr b = fb.carry(b0, "bp");  // "b" would give "b.1", which end_loop reuses (builder bug)
  ValuePtr c = fb.carry(c0, "c");
  ValuePtr d = fb.carry(x, "d");
  ValuePtr e = fb.carry(x, "e");
  ValuePtr h = fb.carry(x, "h");
  ValuePtr k = fb.carry(b0, "k");
  ir::Expr it = ir::make_cast(ir::make_index("it"), ElemType::F32);
  ValuePtr t = fb.compute("t", i, {}, ReduceOp::None,
                          add(add(at(a, "i"), mul(at(c, "i"), f32(0.5))), add(at(d, "i"), it)));
  fb.begin_loop("jt", 2);
  ValuePtr f = fb.carry(e, "f");
  ValuePtr g = fb.compute("g", i, {}, ReduceOp::None, add(mul(at(f, "i"), f32(0.5)), at(t, "i")));
  ValuePtr f_out = fb.end_loop({g}, {})[0];
  ValuePtr shared =
      fb.compute("shared", i, {}, ReduceOp::None, add(at(h, "i"), mul(at(k, "i"), f32(0.25))));
  std::vector<ValuePtr> r = fb.end_loop({b, a, c, a0, f_out, shared, shared}, {t, b});
  for (const ValuePtr& v : r) fb.output(v);
  return fb.finish();
}

/// Max and min starting from an init instead of the identity, and a sum over
/// a range that does not start at 0.
ir::Function init_reductions() {
  ir::FunctionBuilder fb("init_reductions");
  SizeExpr M = SizeExpr::sym("M"), K = SizeExpr::sym("K");
  ValuePtr a = fb.input("a", ElemType::F32, {M, K});
  ValuePtr c = fb.input("c", ElemType::F32, {M});
  ir::Expr amk = ir::make_read(a, {Affine::var("m"), Affine::var("k")});
  std::vector<ir::Dim> m = {{"m", 0, M}};
  fb.output(fb.compute("mx", m, {{"k", 0, K}}, ReduceOp::Max, amk, c));
  fb.output(fb.compute("mn", m, {{"k", 0, K}}, ReduceOp::Min, amk, c));
  fb.output(fb.compute("inner", m, {{"k", 1, K - 1}}, ReduceOp::Sum, amk));
  return fb.finish();
}

/// Outputs that are an input, a value listed twice, and a dead statement.
ir::Function outputs() {
  ir::FunctionBuilder fb("outputs");
  SizeExpr N = SizeExpr::sym("N");
  ValuePtr x = fb.input("x", ElemType::F32, {N});
  ValuePtr y = fb.compute("y", {{"i", 0, N}}, {}, ReduceOp::None, mul(at(x, "i"), f32(3)));
  fb.compute("unused", {{"i", 0, N}}, {}, ReduceOp::None, add(at(x, "i"), f32(1)));
  fb.output(x);
  fb.output(y);
  fb.output(y, "y_again");
  return fb.finish();
}

/// Names that are C++ keywords, collide after '.' becomes '_', or are taken
/// by the generated code itself (acc, workspace).
ir::Function awkward_names() {
  ir::FunctionBuilder fb("int");
  SizeExpr N = SizeExpr::sym("N"), K = SizeExpr::sym("K");
  ValuePtr in = fb.input("float", ElemType::F32, {N, K});
  ValuePtr workspace = fb.input("workspace", ElemType::F32, {N});
  ir::Expr read = ir::make_read(in, {Affine::var("for"), Affine::var("acc")});
  ValuePtr b1 = fb.compute("b_1", {{"for", 0, N}}, {{"acc", 0, K}}, ReduceOp::Sum, read);
  ValuePtr b = fb.compute("b", {{"n", 0, N}}, {}, ReduceOp::None, at(b1, "n"));
  ValuePtr b_1 = fb.compute("b", {{"n", 0, N}}, {}, ReduceOp::None,  // named "b.1"
                            add(at(b, "n"), at(workspace, "n")));
  fb.output(b_1);
  fb.output(b1);
  return fb.finish();
}

/// A temporary stored column-major (as a layout pass may choose): the code
/// must index it through its own strides.
ir::Function transposed_temporary() {
  ir::FunctionBuilder fb("transposed");
  SizeExpr N = SizeExpr::sym("N"), K = SizeExpr::sym("K");
  ValuePtr x = fb.input("x", ElemType::F32, {N, K});
  std::vector<ir::Dim> nk = {{"n", 0, N}, {"k", 0, K}};
  auto nk_read = [](const ValuePtr& v) {
    return ir::make_read(v, {Affine::var("n"), Affine::var("k")});
  };
  ValuePtr t = fb.compute("t", nk, {}, ReduceOp::None, mul(nk_read(x), f32(2)));
  const_cast<ir::Value&>(*t).layout = {1, 0};
  ValuePtr y = fb.compute("y", nk, {}, ReduceOp::None,
                          add(nk_read(t), ir::make_read(t, {Affine::var("n"), Affine{{}, K - 1}})));
  fb.output(y);
  return fb.finish();
}

class JitBuilder : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    module_ = new ir::Module();
    module_->functions = {loop_kinds(), init_reductions(), outputs(), awkward_names(),
                          transposed_temporary()};
    auto compiled = driver::jit_compile_together(
        *module_, {"loop_kinds", "init_reductions", "outputs", "int", "transposed"},
        test_jit_options());
    functions_ = new std::vector<jit::CompiledFunction>(compiled);
  }
  static void TearDownTestSuite() {
    delete functions_;
    delete module_;
  }
  static ir::Module* module_;
  static std::vector<jit::CompiledFunction>* functions_;
};
ir::Module* JitBuilder::module_ = nullptr;
std::vector<jit::CompiledFunction>* JitBuilder::functions_ = nullptr;

TEST_F(JitBuilder, EveryKindOfCarriedTensor) {
  expect_matches_interpreter((*functions_)[0], {{"N", 33}}, 21);
}

TEST_F(JitBuilder, ReductionsFromAnInit) {
  expect_matches_interpreter((*functions_)[1], {{"M", 5}, {"K", 40}}, 22);
}

TEST_F(JitBuilder, OutputsThatAreInputsOrRepeated) {
  expect_matches_interpreter((*functions_)[2], {{"N", 10}}, 23);
  const std::string source = driver::emit_cpp(*module_, {"outputs"}).source;
  EXPECT_EQ(source.find("unused"), std::string::npos) << "a dead statement was emitted";
}

TEST_F(JitBuilder, NamesThatAreNotCppIdentifiers) {
  EXPECT_EQ(c_symbol(module_->functions[3]), "tenet_int");
  expect_matches_interpreter((*functions_)[3], {{"N", 6}, {"K", 9}}, 24);
}

TEST_F(JitBuilder, TemporariesWithALayout) {
  expect_matches_interpreter((*functions_)[4], {{"N", 7}, {"K", 5}}, 25);
  const std::string source = driver::emit_cpp(*module_, {"transposed"}).source;
  EXPECT_NE(source.find("t_t_stride1 = t_N;"), std::string::npos) << source;
}

// libc exports `step` (regexp.h): the library's f__packed must still call its
// own `step`, not the one the process loaded first.
TEST(JitSymbols, EntryNamedLikeALibcFunctionCallsItsOwnCode) {
  ir::Module m = compile_tn("def step(float(N) x) -> (y) { y(i) = x(i) * 2 }");
  jit::CompiledFunction f = driver::jit_compile(m, "step", test_jit_options());
  expect_matches_interpreter(f, {{"N", 17}}, 3);
}

// GCC 12 at -O3 -march=native turned this loop (constant inner extent 10) into
// vector code that wrote 0 for some selected elements; the JIT adds
// jit::compiler_workaround_flags() to every compile.
TEST(JitCompilerBugs, ShortConditionalLoopMatchesInterpreter) {
  ir::Module m = compile_tn(
      "def kink(float(B, 10) len, float(B, 10) d) -> (out) {\n"
      "  out(b, k) = select(len(b, k) - 0.1 >= 0, d(b, k), 0)\n"
      "}");
  jit::CompiledFunction f = driver::jit_compile(m, "kink", test_jit_options());
  for (uint64_t seed = 1; seed <= 4; ++seed) expect_matches_interpreter(f, {{"B", 7}}, seed);
}

}  // namespace
}  // namespace tenet::codegen::testing
