#include "ir/gemm_plan.h"

#include "support/error.h"

namespace tenet::ir {

const ExprNode& gemm_read(const Compute& product, const GemmMatrix& m) {
  TENET_ASSERT(m.factor == 0 || m.factor == 1, "the GEMM's C matrix has no read");
  const ExprNode& body = *product.body;
  TENET_ASSERT(body.kind == ExprKind::Binary && body.binop == BinOp::Mul &&
                   body.args[size_t(m.factor)]->kind == ExprKind::Read,
               "the GEMM plan of " << product.result->name << " is stale: its body is no product");
  return *body.args[size_t(m.factor)];
}

int gemm_leading_dim(const std::vector<Affine>& indices, const std::vector<Dim>& rows,
                     const std::vector<Dim>& cols, bool transposed) {
  const std::vector<Dim>& group = transposed ? cols : rows;
  if (group.empty()) return -1;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d].is_plain_var() && indices[d].terms[0].first == group.back().index) return int(d);
  return -1;
}

namespace {

std::string join(const std::vector<Dim>& dims) {
  if (dims.empty()) return "-";
  std::string out;
  for (const Dim& d : dims) out += (out.empty() ? "" : ", ") + d.index;
  return out;
}

std::string matrix_name(const GemmMatrix& m, const std::string& tensor) {
  if (m.packed) return "pack(" + tensor + ")";
  return tensor + (m.transposed ? "^T" : "");
}

}  // namespace

std::string describe(const GemmPlan& p, const Compute& c) {
  if (p.split) {
    // "dx(b, c, h, w) = sum over i, j of dx_cols?(...); dx_cols[...] = ..."
    const Compute& gather = p.split->gather;
    const ExprNode& read = *gather.body;
    std::string at;
    for (const Affine& a : read.indices) at += (at.empty() ? "" : ", ") + a.str();
    std::string out;
    for (const Dim& d : c.out) out += (out.empty() ? "" : ", ") + d.index;
    GemmPlan gemm = p;
    gemm.split = nullptr;
    return c.result->name + "(" + out + ") = sum over " + join(gather.reduce) + " of " +
           read.tensor->name + "?(" + at + "); " + describe(gemm, p.split->product);
  }
  std::string loops;
  for (const Dim& d : p.loops) loops += (loops.empty() ? "for " : ", ") + d.index;
  return (loops.empty() ? "" : loops + ": ") + matrix_name(p.c, c.result->name) + "[" + join(p.m) +
         " | " + join(p.n) + "] = " + matrix_name(p.a, gemm_read(c, p.a).tensor->name) + "[" +
         join(p.m) + " | " + join(p.k) + "] * " + matrix_name(p.b, gemm_read(c, p.b).tensor->name) +
         "[" + join(p.k) + " | " + join(p.n) + "]";
}

}  // namespace tenet::ir
