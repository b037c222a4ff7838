#include "lower/lowered.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <vector>

#include "ir/printer.h"

namespace tenet::lower {

LoweredFunction find_liveness(const ir::Function& fn) {
  LoweredFunction out;
  out.function = &fn;
  out.liveness = Liveness(fn);
  return out;
}

LoweredFunction lower(const ir::Function& fn, int64_t pack_budget_bytes) {
  LoweredFunction lowered = find_liveness(fn);
  lower_gemms(lowered, pack_budget_bytes);
  lower_scatters(lowered);
  lower_convs(lowered);
  plan_memory(lowered);
  return lowered;
}

namespace {

std::string index_list(const std::vector<ir::Dim>& dims) {
  std::string out;
  for (const ir::Dim& d : dims) out += (out.empty() ? "" : ", ") + d.index;
  return out;
}

std::string statement_text(const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  std::string out = "%" + c.result->name + "[" + index_list(c.out) + "] ";
  out += c.op == ir::ReduceOp::None ? "=" : std::string(ir::op_name(c.op)) + "=";
  if (!c.reduce.empty()) out += " over [" + index_list(c.reduce) + "]";
  return out + " " + ir::print(c.body);
}

std::string shape_text(const std::vector<ir::SizeExpr>& shape) {
  std::string out;
  for (const ir::SizeExpr& e : shape) out += (out.empty() ? "" : ", ") + e.str();
  return "[" + out + "]";
}

}  // namespace

std::string print(const LoweredFunction& lowered) {
  std::ostringstream os;
  os << "lowered " << lowered.function->name << ": " << lowered.gemms.size() << " GEMM statement"
     << (lowered.gemms.size() == 1 ? "" : "s") << "\n";
  // In program order, not in the map's (pointer) order.
  std::vector<const GemmLowering*> order;
  std::function<void(const std::vector<ir::Stmt>&)> walk = [&](const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) walk(s.loop->body);
      if (auto it = lowered.gemms.find(&s); it != lowered.gemms.end()) order.push_back(&it->second);
    }
  };
  walk(lowered.function->body);
  for (const GemmLowering* g : order) {
    const ir::Stmt& s = *g->statement;
    os << "gemm %" << s.compute.result->name << ": " << ir::describe(g->plan, s.compute) << "\n";
    if (g->chunk)
      os << "  in chunks along " << g->chunk->index.index << ": " << g->chunk->len << " of at most "
         << g->capacity << "\n";
    for (const ir::ValuePtr& b : g->buffers)
      os << "  buffer %" << b->name << ": " << type_name(b->type) << shape_text(b->shape)
         << (g->chunk ? " capacity " + shape_text(g->capacity_shape(*b)) : "") << "\n";
    for (const ir::Stmt& x : g->before_chunks) os << "  once: " << statement_text(x) << "\n";
    for (const ir::Stmt& x : g->before) os << "  before: " << statement_text(x) << "\n";
    for (const ir::Stmt& x : g->after) os << "  after: " << statement_text(x) << "\n";
    if (g->scatter) {
      std::string windows;
      for (const WindowDim& w : g->scatter->windows)
        windows += (windows.empty() ? "" : ", ") + w.out;
      os << "  the gather as col2im: a scatter of windows along " << windows << "\n";
    }
  }
  std::vector<std::pair<const ir::Stmt*, const IndexScatter*>> scatters;
  std::vector<const ConvLowering*> convs;
  std::function<void(const std::vector<ir::Stmt>&)> find = [&](const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) find(s.loop->body);
      if (auto it = lowered.scatters.find(&s); it != lowered.scatters.end())
        scatters.push_back({&s, &it->second});
      if (auto it = lowered.convs.find(&s); it != lowered.convs.end()) convs.push_back(&it->second);
    }
  };
  find(lowered.function->body);
  for (const auto& [s, form] : scatters) {
    const ir::Compute& c = s->compute;
    std::string targets;
    for (const ScatterTarget& t : form->targets)
      targets += (targets.empty() ? "" : ", ") + c.out[t.dim].index + " = " + ir::print(t.index);
    os << "scatter %" << c.result->name << ": " << targets << " per [" << index_list(c.reduce)
       << "]" << (form->condition ? " where " + ir::print(form->condition) : "") << "\n";
  }
  for (const ConvLowering* conv : convs)
    os << "conv %" << conv->result->name << ": " << conv->description << "\n";
  const MemoryPlan& memory = lowered.memory;
  os << "workspace: " << memory.slots.size() << " slot" << (memory.slots.size() == 1 ? "" : "s")
     << "\n";
  for (const WorkspaceSlot& slot : memory.slots)
    os << "  %" << slot.value->name << ": " << (slot.copies > 1 ? "2 x " : "")
       << type_name(slot.type) << shape_text(slot.shape) << ", live " << slot.live.first << ".."
       << slot.live.last << (slot.exclusive ? ", exclusive" : "") << "\n";
  std::vector<std::string> rows;  // by name: the map's order is the values' addresses
  for (const auto& [v, row] : memory.row_local) {
    std::string along;
    for (size_t d : row.shared_dims) along += (along.empty() ? "" : ", ") + std::to_string(d);
    rows.push_back("row-local %" + v->name + ": " + std::to_string(row.elements) + " " +
                   std::string(type_name(v->type)) + " inside " + std::to_string(row.depth) +
                   " shared loop" + (row.depth == 1 ? "" : "s") + " (dimension" +
                   (row.shared_dims.size() == 1 ? " " : "s ") + along + ")");
  }
  std::sort(rows.begin(), rows.end());
  for (const std::string& row : rows) os << row << "\n";
  static const char* const kCarryKinds[] = {"unchanged", "alias", "in place", "copy"};
  std::vector<std::pair<std::string, std::string>> carried;
  for (const auto& [c, kind] : memory.carry_kind)
    carried.push_back({c->param->name, kCarryKinds[int(kind)]});
  std::sort(carried.begin(), carried.end());
  for (const auto& [name, kind] : carried) os << "carried %" << name << ": " << kind << "\n";
  return os.str();
}

}  // namespace tenet::lower
