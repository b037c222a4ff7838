// Contractions as GEMM calls: the pack statements around them (lower_gemm)
// and the emitted code (FunctionEmitter::plan_gemm, emit_gemm), in chunks
// when the buffers would exceed the budget (lower_in_chunks).
#include "codegen/cpp_gemm.h"

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/function_emitter.h"
#include "ir/builder.h"
#include "passes/contraction.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

using ir::GemmMatrix;
using ir::GemmPlan;

/// `a` with each index in `values` replaced by that value plus the index
/// itself when `keep` (a shift: v -> v + lo), or by the value alone.
ir::Affine substitute(const ir::Affine& a, const std::map<std::string, ir::SizeExpr>& values,
                      bool keep) {
  ir::Affine out;
  out.offset = a.offset;
  for (const auto& [index, coef] : a.terms) {
    auto it = values.find(index);
    if (it != values.end()) out.offset = out.offset + ir::SizeExpr(coef) * it->second;
    if (it == values.end() || keep) out.terms.push_back({index, coef});
  }
  return out;
}

std::vector<ir::Affine> substitute(const std::vector<ir::Affine>& indices,
                                   const std::map<std::string, ir::SizeExpr>& values, bool keep) {
  std::vector<ir::Affine> out;
  for (const ir::Affine& a : indices) out.push_back(substitute(a, values, keep));
  return out;
}

bool reads_index(const ir::ExprNode& read, const std::string& index) {
  for (const ir::Affine& a : read.indices)
    if (a.coef(index) != 0) return true;
  return false;
}

/// Dims starting at 0: a pack buffer's index v stands for v + lo of the statement.
std::vector<ir::Dim> from_zero(const std::vector<ir::Dim>& dims) {
  std::vector<ir::Dim> out;
  for (const ir::Dim& d : dims) out.push_back({d.index, 0, d.extent()});
  return out;
}

template <typename... Groups>
std::vector<ir::Dim> concat(const Groups&... groups) {
  std::vector<ir::Dim> out;
  (out.insert(out.end(), groups.begin(), groups.end()), ...);
  return out;
}

ir::ValuePtr make_buffer(const std::string& name, ElemType type, const std::vector<ir::Dim>& dims) {
  auto v = std::make_shared<ir::Value>();
  v->name = name;
  v->type = type;
  for (const ir::Dim& d : dims) v->shape.push_back(d.extent());
  return v;
}

std::string index_list(const std::vector<ir::Dim>& dims) {
  std::string out;
  for (const ir::Dim& d : dims) out += (out.empty() ? "" : ", ") + d.index;
  return out;
}

std::string read_text(const ir::ExprNode& read) {
  std::string out = read.tensor->name + (read.guarded ? "?(" : "(");
  for (size_t i = 0; i < read.indices.size(); ++i) out += (i ? ", " : "") + read.indices[i].str();
  return out + ")";
}

ir::Stmt assignment(const ir::ValuePtr& result, std::vector<ir::Dim> out, ir::Expr body,
                    std::string comment) {
  ir::Stmt s;
  s.kind = ir::StmtKind::Compute;
  s.compute.result = result;
  s.compute.out = std::move(out);
  s.compute.op = ir::ReduceOp::None;
  s.compute.body = std::move(body);
  s.source = std::move(comment);
  return s;
}

/// The statement packing `read` into `buffer`, indexed by `dims` (from zero).
ir::Stmt pack_statement(const ir::ExprNode& read, const ir::ValuePtr& buffer,
                        const std::vector<ir::Dim>& dims, const char* role) {
  std::map<std::string, ir::SizeExpr> shift;
  for (const ir::Dim& d : dims)
    if (d.lo != ir::SizeExpr(0)) shift[d.index] = d.lo;
  ir::Expr body = ir::make_read(read.tensor, substitute(read.indices, shift, true), read.guarded);
  std::string comment = "pack " + read.tensor->name + " as GEMM matrix " + role + ": " +
                        buffer->name + "(" + index_list(dims) + ") = " + read_text(*body);
  if (!shift.empty()) comment += " (indices from 0)";
  return assignment(buffer, from_zero(dims), body, comment);
}

std::vector<ir::Dim> loops_read_by(const GemmPlan& p, const ir::ExprNode& read) {
  std::vector<ir::Dim> out;
  for (const ir::Dim& d : p.loops)
    if (reads_index(read, d.index)) out.push_back(d);
  return out;
}

std::vector<ir::Affine> plain(const std::vector<ir::Dim>& dims) {
  std::vector<ir::Affine> out;
  for (const ir::Dim& d : dims) out.push_back(ir::Affine::var(d.index));
  return out;
}

}  // namespace

GemmLowering lower_gemm(const ir::Stmt& s, GemmPlan plan) {
  GemmLowering g;
  g.statement = &s;
  g.plan = std::move(plan);
  const ir::Compute& c = g.product();
  const ElemType type = c.result->type;
  const GemmPlan& p = g.plan;
  if (p.a.packed) {
    const ir::ExprNode& read = ir::gemm_read(c, p.a);
    g.a_loops = loops_read_by(p, read);
    const std::vector<ir::Dim> dims = concat(g.a_loops, p.m, p.k);
    g.a_buffer = make_buffer(read.tensor->name + "_packed", type, from_zero(dims));
    g.before.push_back(pack_statement(read, g.a_buffer, dims, "A"));
  }
  if (p.b.packed) {
    const ir::ExprNode& read = ir::gemm_read(c, p.b);
    g.b_loops = loops_read_by(p, read);
    const std::vector<ir::Dim> dims = concat(g.b_loops, p.k, p.n);
    g.b_buffer = make_buffer(read.tensor->name + "_packed", type, from_zero(dims));
    g.before.push_back(pack_statement(read, g.b_buffer, dims, "B"));
  }
  const std::vector<ir::Affine> out_position = plain(c.out);
  if (p.c.packed) {
    const std::vector<ir::Dim> dims = concat(p.loops, p.m, p.n);
    g.c_buffer = make_buffer(c.result->name + "_product", type, dims);
    ir::Expr body = ir::make_read(g.c_buffer, plain(dims));
    std::string comment = c.result->name + "(" + index_list(c.out) + ") = " + read_text(*body);
    if (c.init) {
      ir::Expr init = ir::make_read(c.init, out_position);
      comment = c.result->name + "(" + index_list(c.out) + ") = " + read_text(*init) + " + " +
                read_text(*body);
      body = ir::make_binary(ir::BinOp::Add, init, body);
    }
    g.after.push_back(
        assignment(c.result, c.out, body, "the GEMM's result into place: " + comment));
  } else if (c.init) {
    ir::Expr init = ir::make_read(c.init, out_position);
    g.before.push_back(assignment(c.result, c.out, init,
                                  "start from the init (the GEMM adds to it): " + c.result->name +
                                      "(" + index_list(c.out) + ") = " + read_text(*init)));
  }
  if (g.plan.split) {
    // col2im: the statement's result as a guarded sum over the columns.
    ir::Stmt gather;
    gather.compute = g.plan.split->gather;
    gather.source = "gather the result from the columns: " + s.compute.result->name + "(" +
                    index_list(s.compute.out) + ") " + (s.compute.init ? "+= " : "+=! ") +
                    read_text(*gather.compute.body);
    g.after.push_back(gather);
  }
  for (const ir::ValuePtr& buffer : {g.a_buffer, g.b_buffer, g.c_buffer})
    if (buffer) g.buffers.push_back(buffer);
  if (g.plan.split) g.buffers.push_back(c.result);
  return g;
}

ir::SizeExpr bytes_per_chunk_unit(const GemmLowering& g, const std::string& len) {
  const std::map<std::string, ir::SizeExpr> one{{len, 1}};
  ir::SizeExpr bytes = 0;
  for (const ir::ValuePtr& buffer : g.buffers) {
    bool chunked = false;
    ir::SizeExpr count = 1;
    for (const ir::SizeExpr& extent : buffer->shape) {
      chunked = chunked || extent.symbols().count(len);
      count = count * extent.substitute(one);
    }
    if (chunked) bytes = bytes + count * int64_t(byte_size(buffer->type));
  }
  return bytes;
}

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
std::optional<GemmLowering> lower_chunk(std::shared_ptr<const GemmChunk> chunk,
                                        const GemmPlan& whole) {
  std::optional<GemmPlan> plan = passes::plan_contraction(chunk->statement.compute);
  if (!plan || bool(plan->split) != bool(whole.split) ||
      !keeps_matrices_dense(*plan, chunk->index.index))
    return std::nullopt;
  GemmLowering g = lower_gemm(chunk->statement, std::move(*plan));
  g.chunk = std::move(chunk);
  return g;
}

/// A representative value of a size, to compare chunkings: every size
/// parameter at 64, the chunk's extent `len` at the whole `extent`.
int64_t representative(const ir::SizeExpr& e, const std::string& len, const ir::SizeExpr& extent) {
  ir::SizeBindings sizes;
  for (const ir::SizeExpr* x : {&e, &extent})
    for (const std::string& s : x->symbols()) sizes[s] = 64;
  sizes[len] = extent.eval(sizes);
  return e.eval(sizes);
}

/// The bytes of the GEMM's matrices (A, B and C, packed or in place) that
/// do not hold `index`: the library reads (and packs) them again for every
/// chunk, so the chunking that leaves the least of them is the fastest.
ir::SizeExpr bytes_read_per_chunk(const GemmLowering& g, const std::string& index) {
  const GemmPlan& p = g.plan;
  const ir::SizeExpr element = int64_t(byte_size(g.product().result->type));
  ir::SizeExpr bytes = 0;
  for (const std::vector<ir::Dim>& matrix :
       {concat(g.a_loops, p.m, p.k), concat(g.b_loops, p.k, p.n), concat(p.loops, p.m, p.n)}) {
    ir::SizeExpr size = element;
    bool holds = false;
    for (const ir::Dim& d : matrix) {
      holds = holds || d.index == index;
      size = size * d.extent();
    }
    if (!holds) bytes = bytes + size;
  }
  return bytes;
}

/// Moves the packs that read no view of the chunk (the same in every chunk)
/// from `before` to `before_chunks`.
void hoist_invariant_packs(GemmLowering& g) {
  auto reads_view = [&](const ir::Stmt& pack) {
    const ir::Value* read =
        pack.compute.body->kind == ir::ExprKind::Read ? pack.compute.body->tensor.get() : nullptr;
    if (!read || pack.compute.result == g.statement->compute.result) return true;
    for (const ChunkView& v : g.chunk->views)
      if (v.view.get() == read) return true;
    for (const ir::SizeExpr& extent : pack.compute.result->shape)
      if (extent.symbols().count(g.chunk->len)) return true;
    return false;
  };
  std::vector<ir::Stmt> per_chunk;
  for (ir::Stmt& pack : g.before)
    (reads_view(pack) ? per_chunk : g.before_chunks).push_back(std::move(pack));
  g.before = std::move(per_chunk);
}

}  // namespace

void FunctionEmitter::plan_gemm(const ir::Stmt& s) {
  const GemmPlan& plan = *s.annotations.gemm;
  const std::string work = product_text(concat(plan.m, plan.n, plan.k), size_names_);
  GemmLowering g = lower_gemm(s, plan);
  if (std::optional<GemmLowering> chunked = lower_in_chunks(s, g)) g = std::move(*chunked);
  g.work = work;
  for (const ir::ValuePtr& buffer : g.buffers) {
    if (!g.chunk) {
      add_temporary(buffer);
      continue;
    }
    const std::map<std::string, ir::SizeExpr> capacity{
        {g.chunk->len, ir::SizeExpr::sym(g.chunk_capacity)}};
    std::vector<ir::SizeExpr> shape;
    for (const ir::SizeExpr& extent : buffer->shape) shape.push_back(extent.substitute(capacity));
    add_temporary(buffer, shape);
  }
  if (g.chunk) {
    // Views: the original's strides, the chunk's extent, a pointer of their own.
    for (const ChunkView& v : g.chunk->views) {
      TensorAccess view = access(v.original);
      view.pointer = names_.take_derived(view.pointer + "_chunk");
      view.dims[size_t(v.dim)] = g.chunk->len;
      tensors_[v.view.get()] = std::move(view);
    }
  }
  gemms_.emplace(&s, std::move(g));
}

std::optional<GemmLowering> FunctionEmitter::lower_in_chunks(const ir::Stmt& s,
                                                             const GemmLowering& whole) {
  const int64_t budget = options_.pack_budget_bytes;
  if (budget <= 0 || whole.buffers.empty()) return std::nullopt;
  // Each out index that can be chunked, at representative sizes (with a
  // probe symbol, of no size parameter's name, for the chunk's extent): the
  // buffer bytes its chunks hold, the bytes they leave whole, and what the
  // GEMMs then read again per chunk. Chunks must leave at most half the
  // budget whole where some index can; of those, the least re-read wins.
  std::string probe = "chunk_len";
  while (std::find(fn_.size_params.begin(), fn_.size_params.end(), probe) != fn_.size_params.end())
    probe += "_";
  ir::SizeExpr all_bytes = 0;
  for (const ir::ValuePtr& buffer : whole.buffers) {
    ir::SizeExpr count = int64_t(byte_size(buffer->type));
    for (const ir::SizeExpr& extent : buffer->shape) count = count * extent;
    all_bytes = all_bytes + count;
  }
  struct Candidate {
    const ir::Dim* index;
    ir::SizeExpr chunked_bytes;
    int64_t left_whole, cost;
  };
  std::optional<Candidate> best;
  auto better = [&](const Candidate& a, const Candidate& b) {
    const bool a_fits = a.left_whole <= budget / 2, b_fits = b.left_whole <= budget / 2;
    if (a_fits != b_fits) return a_fits;
    return a_fits ? a.cost < b.cost : a.left_whole < b.left_whole;
  };
  for (const ir::Dim& d : s.compute.out) {
    std::optional<GemmChunk> chunk = chunk_statement(s, d.index, probe);
    if (!chunk) continue;
    std::optional<GemmLowering> g =
        lower_chunk(std::make_shared<const GemmChunk>(std::move(*chunk)), whole.plan);
    if (!g) continue;
    const ir::SizeExpr chunked = bytes_per_chunk_unit(*g, probe) * d.extent();
    const int64_t chunked_bytes = representative(chunked, probe, d.extent());
    if (chunked_bytes <= 0) continue;
    const int64_t reread = representative(bytes_read_per_chunk(*g, d.index), probe, d.extent());
    const Candidate c{&d, chunked, representative(all_bytes, probe, d.extent()) - chunked_bytes,
                      reread * (chunked_bytes / std::max<int64_t>(budget, 1) + 1)};
    if (!best || better(c, *best)) best = c;
  }
  if (!best) return std::nullopt;
  if (auto bytes = best->chunked_bytes.constant(); bytes && *bytes <= budget) return std::nullopt;
  const ir::Dim* index = best->index;

  // The chunk's extent and capacity are size symbols of its statements as well
  // as C++ names (size_to_c prints a symbol it does not know as it is): no
  // size parameter may have their names.
  auto chunk_symbol = [&](const std::string& wanted) {
    std::string name = names_.take(wanted);
    while (std::find(fn_.size_params.begin(), fn_.size_params.end(), name) != fn_.size_params.end())
      name = names_.take(wanted);
    return name;
  };
  const std::string start = names_.take(index->index + "_start");
  const std::string len = chunk_symbol(index->index + "_len");
  const std::string capacity = chunk_symbol(index->index + "_chunk");
  std::optional<GemmChunk> chunk = chunk_statement(s, index->index, len);
  TENET_ASSERT(chunk.has_value(), "the chunk of " << s.compute.result->name << " vanished");
  std::optional<GemmLowering> g =
      lower_chunk(std::make_shared<const GemmChunk>(std::move(*chunk)), whole.plan);
  TENET_ASSERT(g.has_value(), "the chunk of " << s.compute.result->name << " cannot be planned");
  g->chunk_start = start;
  g->chunk_capacity = capacity;
  hoist_invariant_packs(*g);
  const std::string slice = size_to_c(bytes_per_chunk_unit(*g, len), size_names_).text;
  size_locals_.push_back({capacity, "tenet::chunk_extent(" +
                                        extent_text(index->extent(), s.compute.result->name, 0) +
                                        ", " + slice + ", " + std::to_string(budget) + ")"});
  return g;
}

void FunctionEmitter::emit_gemm(Code& code, const ir::Stmt& s, const Scope& scope) {
  const GemmLowering& g = gemms_.at(&s);
  code.comment(comment_text(s));
  const GemmPlan& plan = *s.annotations.gemm;
  const bool decided_per_call = plan.per_call_min_work != 0;
  if (decided_per_call) {
    const std::string min_work = std::to_string(plan.per_call_min_work);
    code.note("A GEMM when it is large enough (M*N*K >= " + min_work + "), else loops.");
    code.open("if (" + g.work + " >= " + min_work + ")");
  }
  code.note("As a GEMM: " + ir::describe(plan, s.compute) + ".");
  if (!g.chunk) {
    emit_gemm_calls(code, g, scope);
  } else {
    // One chunk of the index per iteration, over views of the tensors it reads.
    const GemmChunk& chunk = *g.chunk;
    const std::string& start = g.chunk_start;
    size_t out_at = 0;
    while (s.compute.out[out_at].index != chunk.index.index) ++out_at;
    const std::string& extent = access(s.compute.result).dims[out_at];
    code.note("In chunks of at most " + g.chunk_capacity + " along " + chunk.index.index +
              ", so that the GEMM's buffers take at most " +
              bytes_text(options_.pack_budget_bytes) +
              "; a pointer *_chunk points at the chunk's part of a tensor.");
    for (const ir::Stmt& pack : g.before_chunks) {
      emit_loop_nest(code, pack, scope);
      code.line("");
    }
    code.open("for (int64_t " + start + " = 0; " + start + " < " + extent + "; " + start +
              " += " + g.chunk_capacity + ")");
    code.line("const int64_t " + chunk.len + " = std::min<int64_t>(" + g.chunk_capacity + ", " +
              extent + " - " + start + ");");
    for (const ChunkView& v : chunk.views) {
      const TensorAccess& original = access(v.original);
      const std::string& stride = original.strides[size_t(v.dim)];
      const std::string type = std::string(c_type_name(v.view->type));
      const bool written = v.original == s.compute.result;
      code.line((written ? type + "* __restrict__ " : "const " + type + "* __restrict__ ") +
                access(v.view).pointer + " = " + original.pointer + " + " + start +
                (stride == "1" ? "" : " * " + stride) + ";");
    }
    code.line("");
    emit_gemm_calls(code, g, scope);
    code.close();
  }
  if (decided_per_call) {
    code.reopen("} else {");
    emit_loop_nest(code, s, scope);
    code.close();
  }
}

void FunctionEmitter::emit_gemm_calls(Code& code, const GemmLowering& g, const Scope& scope) {
  const GemmPlan& p = g.plan;
  const ir::Compute& c = g.product();
  for (const ir::Stmt& before : g.before) {
    emit_loop_nest(code, before, scope);
    code.line("");
  }

  // The calls: one per value of the loop indices.
  Namer local = statement_namer(c, scope);
  Scope inner = scope;
  std::vector<std::string> loop_vars;
  for (const ir::Dim& d : p.loops) {
    loop_vars.push_back(local.take(d.index));
    inner.indices[d.index] = IndexInfo{loop_vars.back(), d.lo, d.hi};
  }
  const std::string m = local.take_derived("gemm_m"), n = local.take_derived("gemm_n"),
                    k = local.take_derived("gemm_k");
  code.open("");
  code.line("const int64_t " + m + " = " + product_text(p.m, size_names_) + ", " + n + " = " +
            product_text(p.n, size_names_) + ", " + k + " = " + product_text(p.k, size_names_) +
            ";");

  // Each matrix: its pointer at the current loop position, and its leading dimension.
  struct Operand {
    std::string pointer, ld;
    bool transposed = false;
  };
  auto at_first_element = [&](const ir::ExprNode& read, const std::vector<ir::Dim>& rows,
                              const std::vector<ir::Dim>& cols) {
    std::map<std::string, ir::SizeExpr> first;
    for (const auto* group : {&rows, &cols})
      for (const ir::Dim& d : *group) first[d.index] = d.lo;
    return substitute(read.indices, first, false);
  };
  auto operand = [&](const GemmMatrix& mat, const ir::ValuePtr& buffer,
                     const std::vector<ir::Dim>& buffer_loops, const std::vector<ir::Dim>& rows,
                     const std::vector<ir::Dim>& cols, const std::string& rows_text,
                     const std::string& cols_text) {
    Operand o;
    if (buffer) {
      const TensorAccess& t = access(buffer);
      std::vector<ir::Affine> position = plain(buffer_loops);
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
    std::map<std::string, ir::SizeExpr> first;
    for (const auto* group : {&p.m, &p.n})
      for (const ir::Dim& d : *group) first[d.index] = 0;
    result.pointer =
        plus_offset(t.pointer, flat_offset(t, substitute(plain(c.out), first, false), inner));
    result.ld = p.c.ld_dim >= 0 ? t.strides[size_t(p.c.ld_dim)] : n;
  }
  const ElemType type = c.result->type;
  const std::string beta = literal(c.init && !g.c_buffer ? 1 : 0, type).text;
  const std::string call =
      "tenet::gemm(" + bool_text(a.transposed) + ", " + bool_text(b.transposed) + ", " + m + ", " +
      n + ", " + k + ", " + literal(1, type).text + ", " + a.pointer + ", " + a.ld + ", " +
      b.pointer + ", " + b.ld + ", " + beta + ", " + result.pointer + ", " + result.ld + ");";
  if (!p.loops.empty() && options_.openmp) {
    // Small GEMMs run one per thread (the library runs single-threaded inside
    // a parallel region); large ones one after the other, each threaded by
    // the library.
    code.note("One GEMM per " + [&] {
      std::string names;
      for (const ir::Dim& d : p.loops) names += (names.empty() ? "" : ", ") + d.index;
      return names;
    }() + "; small ones in parallel, large ones threaded by the library.");
    code.line("#pragma omp parallel for if (" + m + " * " + n + " * " + k + " < " +
              std::to_string(kThreadedGemmWork) + ")");
  }
  for (size_t i = 0; i < p.loops.size(); ++i)
    code.open("for (int64_t " + loop_vars[i] + " = 0; " + loop_vars[i] + " < " +
              product_text({p.loops[i]}, size_names_) + "; ++" + loop_vars[i] + ")");
  code.line(call);
  for (size_t i = 0; i < p.loops.size(); ++i) code.close();
  code.close();

  for (const ir::Stmt& after : g.after) {
    code.line("");
    const bool gather = g.plan.split && &after == &g.after.back();
    if (!gather || !emit_col2im(code, after, scope)) emit_loop_nest(code, after, scope);
  }
}

}  // namespace tenet::codegen::detail
