// Contractions as GEMM calls, printed as C++ from their lowering
// (lower/gemm.h): names for the buffers and chunks (FunctionEmitter::name_gemm),
// then the code (emit_gemm).
#include "codegen/cpp_gemm.h"

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/function_emitter.h"
#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

using ir::GemmMatrix;
using ir::GemmPlan;
using lower::GemmLowering;

template <typename... Groups>
std::vector<ir::Dim> concat(const Groups&... groups) {
  std::vector<ir::Dim> out;
  (out.insert(out.end(), groups.begin(), groups.end()), ...);
  return out;
}

}  // namespace

std::string product_text(const std::vector<ir::Dim>& dims, const NameMap& size_names) {
  int64_t constant = 1;
  std::string product;
  for (const ir::Dim& d : dims) {
    const ir::SizeExpr extent = d.extent();
    if (auto k = extent.constant()) {
      constant *= *k;
      continue;
    }
    product +=
        (product.empty() ? "" : " * ") + wrap(size_to_c(extent, size_names), kPrecMultiplicative);
  }
  if (product.empty()) return std::to_string(constant);
  return constant == 1 ? product : product + " * " + std::to_string(constant);
}

// ---- FunctionEmitter -------------------------------------------------------

namespace {

std::string plus_offset(const std::string& pointer, const std::string& offset) {
  return offset == "0" ? pointer : pointer + " + " + offset;
}

/// "32 MiB", or "1000 bytes" when that is not a whole number of MiB.
std::string bytes_text(int64_t bytes) {
  const int64_t mib = int64_t(1) << 20;
  return bytes % mib == 0 ? std::to_string(bytes / mib) + " MiB" : std::to_string(bytes) + " bytes";
}

std::string bool_text(bool b) {
  return b ? "true" : "false";
}

/// The lowering of one chunk, or nullopt when its plan differs in kind from
/// the whole statement's or a shortened chunk would leave a matrix with gaps.
}  // namespace

void FunctionEmitter::name_gemm(const ir::Stmt& s) {
  const lower::GemmLowering& g = lowered_.gemms.at(&s);
  const GemmPlan& plan = *s.annotations.gemm;
  EmittedGemm e{&g, product_text(concat(plan.m, plan.n, plan.k), size_names_), ""};
  if (g.chunk) {
    // The chunk's extent and capacity are size symbols of its statements and
    // C++ locals: names of their own, which size_to_c prints for the symbols.
    auto chunk_name = [&](const std::string& wanted) {
      std::string name = names_.take(wanted);
      while (std::find(fn_.size_params.begin(), fn_.size_params.end(), name) !=
             fn_.size_params.end())
        name = names_.take(wanted);
      return name;
    };
    const ir::Dim& index = g.chunk->index;
    e.chunk_start = names_.take(index.index + "_start");
    size_names_[g.chunk->len] = chunk_name(index.index + "_len");
    size_names_[g.capacity] = chunk_name(index.index + "_chunk");
    const std::string slice =
        size_to_c(lower::bytes_per_chunk_unit(g, g.chunk->len), size_names_).text;
    size_locals_.push_back({size_names_.at(g.capacity),
                            "tenet::chunk_extent(" +
                                extent_text(index.extent(), s.compute.result->name, 0) + ", " +
                                slice + ", " + std::to_string(options_.pack_budget_bytes) + ")"});
  }
  for (const ir::ValuePtr& buffer : g.buffers) {
    if (g.chunk)
      name_temporary(buffer, g.capacity_shape(*buffer));
    else
      name_temporary(buffer);
  }
  if (g.chunk) {
    // Views: the original's strides, the chunk's extent, a pointer of their own.
    for (const lower::ChunkView& v : g.chunk->views) {
      TensorAccess view = access(v.original);
      view.pointer = names_.take_derived(view.pointer + "_chunk");
      view.dims[size_t(v.dim)] = size_names_.at(g.chunk->len);
      tensors_[v.view.get()] = std::move(view);
    }
  }
  gemms_.emplace(&s, std::move(e));
}

void FunctionEmitter::emit_gemm(Code& code, const lower::Node& call, const Scope& scope) {
  const ir::Stmt& s = *call.stmt;
  const EmittedGemm& e = gemms_.at(&s);
  const GemmLowering& g = *e.lowering;
  code.comment(comment_text(s));
  const GemmPlan& plan = *s.annotations.gemm;
  const bool decided_per_call = plan.per_call_min_work != 0;
  if (decided_per_call) {
    const std::string min_work = std::to_string(plan.per_call_min_work);
    code.note("A GEMM when it is large enough (M*N*K >= " + min_work + "), else loops.");
    code.open("if (" + e.work + " >= " + min_work + ")");
  }
  code.note("As a GEMM: " + ir::describe(plan, s.compute) + ".");
  if (!g.chunk) {
    emit_gemm_calls(code, call, g, scope);
  } else {
    // One chunk of the index per iteration, over views of the tensors it reads.
    const lower::GemmChunk& chunk = *g.chunk;
    const std::string& start = e.chunk_start;
    const std::string& len = size_names_.at(chunk.len);
    const std::string& capacity = size_names_.at(g.capacity);
    size_t out_at = 0;
    while (s.compute.out[out_at].index != chunk.index.index) ++out_at;
    const std::string& extent = access(s.compute.result).dims[out_at];
    code.note("In chunks of at most " + capacity + " along " + chunk.index.index +
              ", so that the GEMM's buffers take at most " +
              bytes_text(options_.pack_budget_bytes) +
              "; a pointer *_chunk points at the chunk's part of a tensor.");
    for (const ir::Stmt& pack : g.before_chunks) {
      print_block(code, call.nested_of(&pack), scope);
      code.line("");
    }
    code.open("for (int64_t " + start + " = 0; " + start + " < " + extent + "; " + start +
              " += " + capacity + ")");
    code.line("const int64_t " + len + " = std::min<int64_t>(" + capacity + ", " + extent + " - " +
              start + ");");
    for (const lower::ChunkView& v : chunk.views) {
      const TensorAccess& original = access(v.original);
      const std::string& stride = original.strides[size_t(v.dim)];
      const std::string type = std::string(c_type_name(v.view->type));
      const bool written = v.original == s.compute.result;
      code.line((written ? type + "* __restrict__ " : "const " + type + "* __restrict__ ") +
                access(v.view).pointer + " = " + original.pointer + " + " + start +
                (stride == "1" ? "" : " * " + stride) + ";");
    }
    code.line("");
    emit_gemm_calls(code, call, g, scope);
    code.close();
  }
  if (decided_per_call) {
    code.reopen("} else {");
    print_block(code, call.nested_of(&s), scope);
    code.close();
  }
}

void FunctionEmitter::emit_gemm_calls(Code& code, const lower::Node& node, const GemmLowering& g,
                                      const Scope& scope) {
  for (const ir::Stmt& before : g.before) {
    print_block(code, node.nested_of(&before), scope);
    code.line("");
  }

  print_block(code, node.body, scope);  // the calls, in the loops of the plan's indices
  for (const ir::Stmt& after : g.after) {
    code.line("");
    print_block(code, node.nested_of(&after), scope);
  }
}

void FunctionEmitter::emit_gemm_call(Code& code, const lower::Node& call, const Scope& inner) {
  const GemmLowering& g = lowered_.gemms.at(call.stmt);
  const GemmPlan& p = g.plan;
  const ir::Compute& c = g.product();
  const std::string &m = var_name(call.sizes[0]), &n = var_name(call.sizes[1]),
                    &k = var_name(call.sizes[2]);
  // Each matrix: its pointer at the current loop position, and its leading dimension.
  struct Operand {
    std::string pointer, ld;
    bool transposed = false;
  };
  auto at_first_element = [&](const ir::ExprNode& read, const std::vector<ir::Dim>& rows,
                              const std::vector<ir::Dim>& cols) {
    std::map<std::string, ir::Affine> first;
    for (const auto* group : {&rows, &cols})
      for (const ir::Dim& d : *group) first[d.index] = ir::affine_const(d.lo);
    return ir::substitute(read.indices, first);
  };
  auto operand = [&](const GemmMatrix& mat, const ir::ValuePtr& buffer,
                     const std::vector<ir::Dim>& buffer_loops, const std::vector<ir::Dim>& rows,
                     const std::vector<ir::Dim>& cols, const std::string& rows_text,
                     const std::string& cols_text) {
    Operand o;
    if (buffer) {
      const TensorAccess& t = access(buffer);
      std::vector<ir::Affine> position = ir::plain_indices(buffer_loops);
      position.resize(size_t(buffer->rank()), ir::Affine{{}, 0});
      o.pointer = plus_offset(t.pointer, flat_offset(t, position, inner));
      // Rows are as far apart as the buffer's capacity makes them, which
      // exceeds the columns in a short chunk along a column index.
      const size_t last_row = buffer_loops.size() + rows.size();
      o.ld = g.chunk && !rows.empty() ? t.strides[last_row - 1] : cols_text;
      return o;
    }
    const ir::ExprNode& read = ir::gemm_read(c, mat);
    const TensorAccess& t = access(read.tensor);
    o.pointer = plus_offset(t.pointer, flat_offset(t, at_first_element(read, rows, cols), inner));
    o.transposed = mat.transposed;
    o.ld = mat.ld_dim >= 0 ? t.strides[size_t(mat.ld_dim)] : mat.transposed ? rows_text : cols_text;
    return o;
  };
  const Operand a = operand(p.a, g.a_buffer, g.a_loops, p.m, p.k, m, k);
  const Operand b = operand(p.b, g.b_buffer, g.b_loops, p.k, p.n, k, n);
  Operand result;
  if (g.c_buffer) {
    result = operand(p.c, g.c_buffer, p.loops, p.m, p.n, m, n);
  } else {
    const TensorAccess& t = access(c.result);
    std::map<std::string, ir::Affine> first;
    for (const auto* group : {&p.m, &p.n})
      for (const ir::Dim& d : *group) first[d.index] = ir::affine_const(0);
    result.pointer = plus_offset(
        t.pointer, flat_offset(t, ir::substitute(ir::plain_indices(c.out), first), inner));
    result.ld = p.c.ld_dim >= 0 ? t.strides[size_t(p.c.ld_dim)] : n;
  }
  const ElemType type = c.result->type;
  const std::string beta = literal(c.init && !g.c_buffer ? 1 : 0, type).text;
  const std::string text = std::string(on_device() ? "tenet::device::gemm(" : "tenet::gemm(") +
                           bool_text(a.transposed) + ", " + bool_text(b.transposed) + ", " + m +
                           ", " + n + ", " + k + ", " + literal(1, type).text + ", " + a.pointer +
                           ", " + a.ld + ", " + b.pointer + ", " + b.ld + ", " + beta + ", " +
                           result.pointer + ", " + result.ld + ");";
  code.line(text);
}

}  // namespace tenet::codegen::detail
