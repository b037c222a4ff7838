// The contraction pass: which statements it marks for the GEMM library, with
// which plan (rows | columns of each matrix, packed or in place), and that it
// changes nothing but attributes.
#include "passes/contraction.h"

#include <gtest/gtest.h>

#include "ir/conv_plan.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/pipeline.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

/// The statement defining `name` in `fn` (top level).
const Stmt& statement(const Function& fn, const std::string& name) {
  for (const Stmt& s : fn.body)
    if (s.kind == StmtKind::Compute && s.compute.result->name == name) return s;
  ADD_FAILURE() << "no statement defines " << name;
  static const Stmt none;
  return none;
}

/// The GEMM plan as comments print it, or "(none)". For a statement the pass
/// gave the convolution library (Annotations::conv), the GEMM plan it would
/// have otherwise (that of a convolution with a wider window).
std::string plan(const Stmt& s) {
  if (s.annotations.conv) {
    const std::optional<GemmPlan> p = passes::plan_contraction(s.compute);
    return p ? describe(*p, s.compute) : "(none)";
  }
  return s.annotations.gemm ? describe(*s.annotations.gemm, s.compute) : "(none)";
}

/// The convolution plan's role, or "(none)".
std::string conv_role(const Stmt& s) {
  return s.annotations.conv ? role_name(s.annotations.conv->role) : "(none)";
}

/// How the statement is computed: "gemm", "gemm if WORK >= MIN" or "(none)" (loops).
std::string lowering(const Stmt& s) {
  if (!s.annotations.gemm) return "(none)";
  const GemmPlan& p = *s.annotations.gemm;
  if (p.per_call_min_work == 0) return "gemm";
  return "gemm if " + p.work.str() + " >= " + std::to_string(p.per_call_min_work);
}

class ContractionPass : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = testing::read_ir("contraction.ir");
    before_ = module_;
    for (Function& f : module_.functions) {
      passes::contraction(f);
      verify(f, "contraction");
    }
  }
  const Function& fn(const std::string& name) { return *module_.find(name); }

  Module module_, before_;
};

TEST_F(ContractionPass, OnlyAttributesChange) {
  for (size_t i = 0; i < module_.functions.size(); ++i) {
    Function stripped = module_.functions[i].clone();
    for (Stmt& s : stripped.body) s.annotations = {};
    Function original = before_.functions[i].clone();
    for (Stmt& s : original.body) s.annotations = {};
    EXPECT_EQ(print(stripped), print(original));
  }
  testing::expect_same_outputs(before_.functions[0], module_.functions[0]);
}

TEST_F(ContractionPass, SmallConvolutionsGoToTheConvolutionLibrary) {
  const Function& conv = fn("conv");
  EXPECT_EQ(conv_role(statement(conv, "y")), "forward");
  EXPECT_EQ(conv_role(statement(conv, "y2")), "forward");
  EXPECT_EQ(conv_role(statement(conv, "d_w")), "backward_weights");
  EXPECT_EQ(conv_role(statement(conv, "d_x")), "backward_data");
  EXPECT_EQ(conv_role(statement(conv, "d_x3")), "backward_data");
  // Only 32 of w's 128 filters: not a convolution of w, so a GEMM.
  EXPECT_EQ(conv_role(statement(conv, "d_x2")), "(none)");
  // Onto an init (AD's input gradient of a block's first convolution, added to
  // the shortcut's): the library's sum, then the init added to it.
  EXPECT_EQ(conv_role(statement(conv, "d_x.1")), "backward_data");
  EXPECT_EQ(describe(*statement(conv, "d_x.1").annotations.conv, statement(conv, "d_x.1").compute),
            "backward_data: d_x.1[2, 4, 18, 18] = conv_data(d_y[2, 128, 16, 16], w[128, 4, 3, 3], "
            "stride 1x1, pad 0x0) + d_x");
  for (const char* name : {"y", "d_w", "d_x", "d_x.1"})
    EXPECT_EQ(lowering(statement(conv, name)), "(none)");
  EXPECT_EQ(describe(*statement(conv, "d_x3").annotations.conv, statement(conv, "d_x3").compute),
            "backward_data: d_x3[2, 64, 18, 18] = conv_data(d_y3[2, 4, 16, 16], w3[4, 64, 3, 3], "
            "stride 1x1, pad 0x0)");
}

TEST_F(ContractionPass, PlansMatricesInPlaceOrPacked) {
  const Function& shapes = fn("shapes");
  EXPECT_EQ(lowering(statement(shapes, "abt")), "gemm");
  EXPECT_EQ(plan(statement(shapes, "abt")), "abt[i | j] = a[i | k] * bt^T[k | j]");
  EXPECT_EQ(plan(statement(shapes, "bmm")), "for b: bmm[i | j] = x[i | k] * y[k | j]");
  // C^T = B^T A^T: a gives the columns.
  EXPECT_EQ(plan(statement(shapes, "ct")), "ct[j | i] = bt[j | k] * a^T[k | i]");

  const Function& conv = fn("conv");
  EXPECT_EQ(plan(statement(conv, "y")),
            "for b: y[o | i, j] = w[o | c, ki, kj] * pack(x)[c, ki, kj | i, j]");
  EXPECT_EQ(plan(statement(conv, "y2")),
            "pack(y2)[b, i, j | o] = pack(x2)[b, i, j | c, ki, kj] * w^T[c, ki, kj | o]");
  EXPECT_EQ(plan(statement(conv, "d_w")),
            "d_w[o | c, ki, kj] = pack(d_y)[o | b, i, j] * pack(x)[b, i, j | c, ki, kj]");
  // Stride 1, 128 -> 4 channels: columns without zeros (smaller than d_y
  // packed with them), then a gather; 4 channels are too few rows for a GEMM
  // per image: one GEMM, C packed.
  EXPECT_EQ(plan(statement(conv, "d_x")),
            "d_x(b, c, h, w) = sum over ki, kj of d_x_cols?(b, c, ki, kj, h - ki, w - kj); "
            "pack(d_x_cols)[b, k_h, k_w | c, ki, kj] = pack(d_y)[b, k_h, k_w | o] * "
            "w[o | c, ki, kj]");
  // Stride 1, 4 -> 64 channels: the columns would be larger than d_y3 packed
  // with its zeros, so a GEMM with the guarded read packed; 64 channels are
  // rows enough (kMinLoopedGemmSide) for one GEMM per image, in place.
  EXPECT_EQ(plan(statement(conv, "d_x3")),
            "for b: d_x3[c | h, w] = pack(w3)[c | o, ki, kj] * pack(d_y3)[o, ki, kj | h, w]");
  // Stride 2: the GEMM computes columns without zeros, a guarded gather the rest.
  EXPECT_EQ(plan(statement(conv, "d_x2")),
            "d_x2(b, c, h, w) = sum over i, j of d_x2_cols?(b, i, j, c, h - 2*i, w - 2*j); "
            "d_x2_cols[b, i, j | c, k_h, k_w] = pack(d_y2)[b, i, j | o] * w[o | c, k_h, k_w]");

  EXPECT_EQ(plan(statement(fn("capsules"), "uh")),
            "for t, y, x: uh[b | k, e] = u[b | d] * W^T[d | k, e]");
}

TEST_F(ContractionPass, SymbolicSizesDecidePerCall) {
  const Stmt& c = statement(fn("matmul"), "c");
  EXPECT_EQ(lowering(c), "gemm if K*M*N >= 65536");
  EXPECT_EQ(plan(c), "c[i | j] = a[i | k] * b[k | j]");
}

TEST_F(ContractionPass, LeavesSmallContractionsAndOthersAlone) {
  const Function& shapes = fn("shapes");
  for (const char* name : {"av", "sq", "dots", "rows", "plus"}) {
    EXPECT_EQ(lowering(statement(shapes, name)), "(none)") << name;
    EXPECT_EQ(plan(statement(shapes, name)), "(none)") << name;
  }
  // The plan exists for a small contraction; only its size keeps it in loops.
  ASSERT_TRUE(passes::plan_contraction(statement(shapes, "sq").compute).has_value());
  EXPECT_FALSE(passes::plan_contraction(statement(shapes, "dots").compute).has_value());
  EXPECT_FALSE(passes::plan_contraction(statement(shapes, "plus").compute).has_value());
}

TEST_F(ContractionPass, RemovesStaleDecisions) {
  Function f = fn("shapes").clone();
  for (Stmt& s : f.body) {
    if (s.compute.result->name != "sq") continue;
    s.annotations.gemm =
        passes::plan_contraction(s.compute).has_value()
            ? std::make_shared<const GemmPlan>(*passes::plan_contraction(s.compute))
            : nullptr;
    ASSERT_TRUE(s.annotations.gemm);
  }
  passes::contraction(f);
  EXPECT_EQ(lowering(statement(f, "sq")), "(none)");
  EXPECT_EQ(plan(statement(f, "sq")), "(none)");
}

TEST_F(ContractionPass, RunsInThePipelineAndPrintsBack) {
  Module m = testing::read_ir("contraction.ir");
  for (const passes::Pass& p : passes::pipeline()) {
    for (Function& f : m.functions) p.run(f);
    if (std::string(p.name) == "contraction") break;
  }
  const std::string text = print(m);
  EXPECT_NE(text.find("gemm = always"), std::string::npos);
  // The printed plans parse back, every field of them (the leading
  // dimensions and factors too, which the text leaves implicit).
  Module again = parse_ir(SourceFile("contraction.ir", text));
  EXPECT_EQ(print(again), text);
  auto fields = [](const Function& f) {
    std::string out;
    for (const Stmt& s : f.body) {
      if (!s.annotations.gemm) continue;
      const GemmPlan& p = *s.annotations.gemm;
      out += s.compute.result->name + ": " + lowering(s) + " " + plan(s);
      for (const GemmMatrix* x : {&p.a, &p.b, &p.c})
        out += " (" + std::to_string(x->factor) + std::to_string(x->packed) +
               std::to_string(x->transposed) + std::to_string(x->ld_dim) + ")";
      out += " " + p.work.str() + (p.split ? " " + print(p.split->product.body) : "") + "\n";
    }
    return out;
  };
  int planned = 0;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    EXPECT_EQ(fields(again.functions[i]), fields(m.functions[i]));
    planned += !fields(m.functions[i]).empty();
  }
  EXPECT_GT(planned, 1);
}

}  // namespace
}  // namespace tenet::ir
