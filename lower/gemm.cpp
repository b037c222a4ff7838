// Contractions as GEMM calls, for every backend: the pack statements around
// them (lower_gemm), in chunks when the buffers would exceed the budget
// (lower_in_chunks).
#include "lower/gemm.h"

#include "lower/lowered_function.h"
#include "lower/updates.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "passes/contraction.h"
#include "support/error.h"

namespace tenet::lower {

using ir::GemmMatrix;
using ir::GemmPlan;

namespace {

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
  std::vector<ir::SizeExpr> shape;
  for (const ir::Dim& d : dims) shape.push_back(d.extent());
  return ir::make_value(-1, name, type, std::move(shape));
}

std::string index_list(const std::vector<ir::Dim>& dims) {
  std::string out;
  for (const ir::Dim& d : dims) out += (out.empty() ? "" : ", ") + d.index;
  return out;
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
  std::map<std::string, ir::Affine> shift;
  for (const ir::Dim& d : dims)
    if (d.lo != ir::SizeExpr(0)) shift[d.index] = ir::Affine::var(d.index) + ir::affine_const(d.lo);
  ir::Expr body = ir::make_read(read.tensor, ir::substitute(read.indices, shift), read.guarded);
  std::string comment = "pack " + read.tensor->name + " as GEMM matrix " + role + ": " +
                        buffer->name + "(" + index_list(dims) + ") = " + ir::read_text(*body);
  if (!shift.empty()) comment += " (indices from 0)";
  return assignment(buffer, from_zero(dims), body, comment);
}

std::vector<ir::Dim> loops_read_by(const GemmPlan& p, const ir::ExprNode& read) {
  std::vector<ir::Dim> out;
  for (const ir::Dim& d : p.loops)
    if (reads_index(read, d.index)) out.push_back(d);
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
  const std::vector<ir::Affine> out_position = ir::plain_indices(c.out);
  if (p.c.packed) {
    const std::vector<ir::Dim> dims = concat(p.loops, p.m, p.n);
    g.c_buffer = make_buffer(c.result->name + "_product", type, dims);
    ir::Expr body = ir::make_read(g.c_buffer, ir::plain_indices(dims));
    std::string comment = c.result->name + "(" + index_list(c.out) + ") = " + ir::read_text(*body);
    if (c.init) {
      ir::Expr init = ir::make_read(c.init, out_position);
      comment = c.result->name + "(" + index_list(c.out) + ") = " + ir::read_text(*init) + " + " +
                ir::read_text(*body);
      body = ir::make_binary(ir::BinOp::Add, init, body);
    }
    g.after.push_back(
        assignment(c.result, c.out, body, "the GEMM's result into place: " + comment));
  } else if (c.init) {
    ir::Expr init = ir::make_read(c.init, out_position);
    g.before.push_back(assignment(c.result, c.out, init,
                                  "start from the init (the GEMM adds to it): " + c.result->name +
                                      "(" + index_list(c.out) + ") = " + ir::read_text(*init)));
  }
  if (g.plan.split) {
    // col2im: the statement's result as a guarded sum over the columns.
    ir::Stmt gather;
    gather.compute = g.plan.split->gather;
    gather.source = "gather the result from the columns: " + s.compute.result->name + "(" +
                    index_list(s.compute.out) + ") " + (s.compute.init ? "+= " : "+=! ") +
                    ir::read_text(*gather.compute.body);
    g.after.push_back(gather);
    g.scatter = scatter_form(gather.compute);
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

std::vector<ir::SizeExpr> GemmLowering::capacity_shape(const ir::Value& buffer) const {
  if (!chunk) return buffer.shape;
  const std::map<std::string, ir::SizeExpr> at_capacity{{chunk->len, ir::SizeExpr::sym(capacity)}};
  std::vector<ir::SizeExpr> shape;
  for (const ir::SizeExpr& extent : buffer.shape) shape.push_back(extent.substitute(at_capacity));
  return shape;
}

namespace {

/// Size symbols of no size parameter's name, none used twice in a function.
class SizeSymbols {
 public:
  explicit SizeSymbols(const ir::Function& fn)
      : taken_(fn.size_params.begin(), fn.size_params.end()) {}
  bool taken(const std::string& name) const { return taken_.count(name) > 0; }
  std::string take(const std::string& wanted) {
    std::string name = wanted;
    for (int k = 1; taken(name); ++k) name = wanted + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

 private:
  std::set<std::string> taken_;
};

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

/// `whole` (the lowering of `s`) in chunks, or nullopt when its buffers fit
/// the budget as they are or no out index can be chunked.
std::optional<GemmLowering> lower_in_chunks(const ir::Stmt& s, const GemmLowering& whole,
                                            int64_t budget, SizeSymbols& symbols) {
  if (budget <= 0 || whole.buffers.empty()) return std::nullopt;
  // Each out index that can be chunked, at representative sizes (with a
  // probe symbol, of no size parameter's name, for the chunk's extent): the
  // buffer bytes its chunks hold, the bytes they leave whole, and what the
  // GEMMs then read again per chunk. Chunks must leave at most half the
  // budget whole where some index can; of those, the least re-read wins.
  std::string probe = "chunk_len";
  while (symbols.taken(probe)) probe += "_";
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

  const std::string len = symbols.take(index->index + "_len");
  const std::string capacity = symbols.take(index->index + "_chunk");
  std::optional<GemmChunk> chunk = chunk_statement(s, index->index, len);
  TENET_ASSERT(chunk.has_value(), "the chunk of " << s.compute.result->name << " vanished");
  std::optional<GemmLowering> g =
      lower_chunk(std::make_shared<const GemmChunk>(std::move(*chunk)), whole.plan);
  TENET_ASSERT(g.has_value(), "the chunk of " << s.compute.result->name << " cannot be planned");
  g->capacity = capacity;
  hoist_invariant_packs(*g);
  return g;
}

// An output updated in place (lower/updates.h) holds the init already: the
// statement that starts the GEMM from it would copy the buffer onto itself.
void drop_init_copy(GemmLowering& g, const ir::Compute& c) {
  auto copies_init = [&](const ir::Stmt& t) {
    const ir::Compute& k = t.compute;
    return t.kind == ir::StmtKind::Compute && k.op == ir::ReduceOp::None &&
           k.result->id == c.result->id && k.body->kind == ir::ExprKind::Read &&
           k.body->tensor->id == c.init->id;
  };
  g.before.erase(std::remove_if(g.before.begin(), g.before.end(), copies_init), g.before.end());
}

void lower_block(const std::vector<ir::Stmt>& body, int64_t budget, SizeSymbols& symbols,
                 LoweredFunction& out) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      if (out.liveness.live(*s.loop)) lower_block(s.loop->body, budget, symbols, out);
      continue;
    }
    if (!s.annotations.gemm || !out.liveness.live(s.compute)) continue;
    GemmLowering g = lower_gemm(s, *s.annotations.gemm);
    if (std::optional<GemmLowering> chunked = lower_in_chunks(s, g, budget, symbols))
      g = std::move(*chunked);
    if (s.compute.init && shares_buffer(*out.function, *s.compute.init, *s.compute.result))
      drop_init_copy(g, s.compute);
    out.gemms.emplace(&s, std::move(g));
  }
}

}  // namespace

void lower_gemms(LoweredFunction& lowered, int64_t pack_budget_bytes) {
  SizeSymbols symbols(*lowered.function);
  lower_block(lowered.function->body, pack_budget_bytes, symbols, lowered);
}

}  // namespace tenet::lower
