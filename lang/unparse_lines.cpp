// IR statements to source statements (Lines). The language names tensors,
// not SSA values, so the question here is which values may share a name:
//   - `T(i) += e` updates T in place: the accumulation's result and its init
//     share a name when the init is not needed afterwards (nor an input);
//   - a loop-carried tensor is one name for its init, the parameter the body
//     reads, the body's last version and the result after the loop; a
//     live-out is one name for the body's value and the result.
// Each such merge is proposed unless a refusal says otherwise (the scope
// replay refuses merges that would change meaning). Without a merge the line
// is spelled out: `T(i) = T0(i) + e`, or a copy `T(i) = T0(i)` then
// `T(i) += e`; a refused loop carry copies into a fresh name before the loop
// and back at the end of the body.
#include <limits>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "lang/unparse_internal.h"

namespace tenet::lang::unparse_detail {

ValueKey Groups::find(ValueKey v) const {
  auto it = parent_.find(v);
  if (it == parent_.end() || it->second == v) return v;
  ValueKey root = find(it->second);
  it->second = root;
  return root;
}

void Groups::join(ValueKey a, ValueKey b) {
  ValueKey ra = find(a), rb = find(b);
  if (ra != rb) parent_[rb] = ra;
  parent_.emplace(ra, ra);
}

namespace {

constexpr int64_t kAfterEverything = std::numeric_limits<int64_t>::max();

/// The last position (in a pre-order numbering of statements) where each
/// value is used: read, updated as an init, carried in or out of a loop, or
/// returned.
class LastUse {
 public:
  explicit LastUse(const ir::Function& fn) {
    walk(fn.body);
    for (const auto& v : fn.outputs) use(v, kAfterEverything);
  }
  int64_t of(const ir::ValuePtr& v) const {
    auto it = last_.find(v.get());
    return it == last_.end() ? -1 : it->second;
  }
  int64_t position(const ir::Stmt& s) const { return position_.at(&s); }

 private:
  void use(const ir::ValuePtr& v, int64_t at) {
    if (!v) return;
    int64_t& last = last_[v.get()];
    last = std::max(last, at);
  }
  void reads(const ir::Expr& e, int64_t at) {
    for (const ir::Expr& read : ir::reads_of(e)) use(read->tensor, at);
  }
  void walk(const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& s : body) {
      int64_t at = next_++;
      position_[&s] = at;
      if (s.kind == ir::StmtKind::Compute) {
        reads(s.compute.body, at);
        use(s.compute.init, at);
        continue;
      }
      for (const auto& c : s.loop->carried) use(c.init, at);
      walk(s.loop->body);
      int64_t end = next_++;
      for (const auto& c : s.loop->carried) use(c.next, end);
    }
  }

  std::map<ValueKey, int64_t> last_;
  std::map<const ir::Stmt*, int64_t> position_;
  int64_t next_ = 0;
};

class Lowering {
 public:
  Lowering(const ir::Function& fn, const std::set<ValueKey>& refused, Lowered& out)
      : fn_(fn), refused_(refused), uses_(fn), out_(out) {}

  void run() {
    out_.lines = block(fn_.body);
    outputs();
  }

 private:
  std::vector<Line> block(const std::vector<ir::Stmt>& stmts) {
    std::vector<Line> lines;
    for (const ir::Stmt& s : stmts) {
      if (s.kind == ir::StmtKind::Compute)
        compute(s, lines);
      else
        loop(s, lines);
    }
    return lines;
  }

  static Line header(const ir::Stmt& s) {
    Line line;
    line.source = s.source;
    line.attrs = ir::describe_annotations(s);
    return line;
  }

  bool is_input(const ir::ValuePtr& v) const {
    for (const auto& in : fn_.inputs)
      if (in == v) return true;
    return false;
  }

  /// Makes the merge keyed by `key` (joining `members`) unless it is refused.
  bool merge(ValueKey key, const std::vector<ValueKey>& members) {
    if (refused_.count(key)) return false;
    for (size_t i = 1; i < members.size(); ++i) out_.groups.join(members[0], members[i]);
    out_.merges[key] = members;
    return true;
  }

  /// A value for a copy the printed program needs, shaped like `like`.
  ir::ValuePtr make_value(const ir::ValuePtr& like, const std::string& name) {
    ir::ValuePtr v = ir::renamed(like, -1 - int(out_.made.size()), name);
    out_.made.push_back(v);
    return v;
  }

  /// Out dims of a copy of v, with indices i, j, k, ...
  static std::vector<ir::Dim> dims_of(const ir::ValuePtr& v) {
    static const char* kNames[] = {"i", "j", "k", "l", "m", "n", "p", "q"};
    std::vector<ir::Dim> dims;
    for (int d = 0; d < v->rank(); ++d) {
      std::string name = d < 8 ? kNames[d] : "i" + std::to_string(d);
      dims.push_back(ir::Dim{name, ir::SizeExpr(0), v->shape[size_t(d)]});
    }
    return dims;
  }

  static ir::Expr read_at(const ir::ValuePtr& v, const std::vector<ir::Dim>& dims) {
    return ir::make_read(v, ir::plain_indices(dims));
  }

  /// `target(dims) = source(dims)`.
  Line copy(const ir::ValuePtr& target, const ir::ValuePtr& source) {
    Line line;
    line.target = target;
    line.op = "=";
    line.out = dims_of(target);
    line.body = read_at(source, line.out);
    return line;
  }

  static const char* reduce_text(ir::ReduceOp op) {
    switch (op) {
      case ir::ReduceOp::Sum:
        return "+=!";
      case ir::ReduceOp::Max:
        return "max=!";
      case ir::ReduceOp::Min:
        return "min=!";
      case ir::ReduceOp::Prod:
        return "*=!";
      case ir::ReduceOp::None:
        break;
    }
    return "=";
  }

  void compute(const ir::Stmt& s, std::vector<Line>& lines) {
    const ir::Compute& c = s.compute;
    Line line = header(s);
    line.target = c.result;
    line.out = c.out;
    line.body = c.body;
    line.reshape = s.annotations.reshape && c.op == ir::ReduceOp::None;
    if (!c.init) {
      // A reduction over nothing is its one term.
      bool reduces = c.op != ir::ReduceOp::None && !c.reduce.empty();
      line.op = reduces ? reduce_text(c.op) : "=";
      if (reduces) line.reduce = c.reduce;
      lines.push_back(std::move(line));
      return;
    }
    if (c.op == ir::ReduceOp::Sum) {
      bool can_merge = !is_input(c.init) && uses_.of(c.init) <= uses_.position(s);
      if (can_merge && merge(c.result.get(), {c.result.get(), c.init.get()})) {
        line.op = "+=";
        line.init = c.init;
        line.reduce = c.reduce;
        lines.push_back(std::move(line));
      } else if (c.reduce.empty()) {
        // init + body, exactly what the IR computes.
        line.op = "=";
        line.body = ir::make_binary(ir::BinOp::Add, read_at(c.init, c.out), c.body);
        lines.push_back(std::move(line));
      } else {
        // A copy, then `+=`: the same order of additions as the IR.
        ir::ValuePtr start = make_value(c.result, c.result->name);
        out_.groups.join(start.get(), c.result.get());
        Line first = line;  // with the statement's comments
        first.target = start;
        first.op = "=";
        first.body = read_at(c.init, c.out);
        lines.push_back(std::move(first));
        line.source.clear();
        line.attrs.clear();
        line.op = "+=";
        line.init = start;
        line.reduce = c.reduce;
        lines.push_back(std::move(line));
      }
      return;
    }
    // max/min/prod onto an existing tensor: reduce, then combine with fmax/fmin/*.
    ir::BinOp combine = c.op == ir::ReduceOp::Max   ? ir::BinOp::Max
                        : c.op == ir::ReduceOp::Min ? ir::BinOp::Min
                                                    : ir::BinOp::Mul;
    line.op = "=";
    if (c.reduce.empty()) {
      line.body = ir::make_binary(combine, read_at(c.init, c.out), c.body);
      lines.push_back(std::move(line));
      return;
    }
    ir::ValuePtr partial = make_value(c.result, c.result->name + "_" + ir::op_name(c.op));
    Line reduce = line;
    reduce.target = partial;
    reduce.op = reduce_text(c.op);
    reduce.reduce = c.reduce;
    lines.push_back(std::move(reduce));
    Line combined;
    combined.target = c.result;
    combined.op = "=";
    combined.out = c.out;
    combined.body = ir::make_binary(combine, read_at(c.init, c.out), read_at(partial, c.out));
    lines.push_back(std::move(combined));
  }

  void loop(const ir::Stmt& s, std::vector<Line>& lines) {
    const ir::Loop& l = *s.loop;
    Line line = header(s);
    line.kind = Line::Kind::Loop;
    line.var = l.var;
    line.trip = l.trip;
    std::vector<Line> tail;  // copies at the end of the body
    for (const ir::Loop::Carried& c : l.carried) {
      if (!c.init) {
        if (merge(c.result.get(), {c.result.get(), c.next.get()})) {
          line.carries.push_back(Carry{c.init, c.param, c.next, c.result});
          continue;
        }
        ir::ValuePtr last = make_value(c.result, c.result->name);
        out_.groups.join(last.get(), c.result.get());
        tail.push_back(copy(last, c.next));
        line.carries.push_back(Carry{nullptr, nullptr, last, c.result});
        continue;
      }
      // The carried name is the parameter's, and the result's after the loop.
      // The initial value takes it too unless it is needed after the loop
      // starts (else a copy before the loop); so does the body's last version
      // (else a copy at the end of the body).
      out_.groups.join(c.param.get(), c.result.get());
      ir::ValuePtr start = c.init;
      bool init_free = !is_input(c.init) && uses_.of(c.init) <= uses_.position(s);
      if (!init_free || !merge(c.param.get(), {c.param.get(), c.init.get()})) {
        start = make_value(c.param, c.param->name);
        out_.groups.join(start.get(), c.param.get());
        lines.push_back(copy(start, c.init));
      }
      ir::ValuePtr next = c.next;
      if (next != c.param && !merge(c.result.get(), {c.param.get(), c.next.get()})) {
        next = make_value(c.param, c.param->name);
        out_.groups.join(next.get(), c.param.get());
        tail.push_back(copy(next, c.next));
      }
      line.carries.push_back(Carry{start, c.param, next, c.result});
    }
    line.body_lines = block(l.body);
    for (Line& t : tail) line.body_lines.push_back(std::move(t));
    lines.push_back(std::move(line));
  }

  void outputs() {
    std::set<ValueKey> claimed_groups;
    for (size_t i = 0; i < fn_.outputs.size(); ++i) {
      const ir::ValuePtr& v = fn_.outputs[i];
      std::string name = i < fn_.output_names.size() ? fn_.output_names[i] : v->name;
      ir::ValuePtr value = v;
      if (is_input(v) || claimed_groups.count(out_.groups.find(v.get()))) {
        value = make_value(v, name);
        out_.lines.push_back(copy(value, v));
      }
      claimed_groups.insert(out_.groups.find(value.get()));
      out_.outputs.push_back(OutputSlot{value, name});
    }
  }

  const ir::Function& fn_;
  const std::set<ValueKey>& refused_;
  LastUse uses_;
  Lowered& out_;
};

}  // namespace

Lowered lower_lines(const ir::Function& fn, const std::set<ValueKey>& refused) {
  Lowered out;
  Lowering(fn, refused, out).run();
  for (const OutputSlot& o : out.outputs)
    out.claimed.emplace(out.groups.find(o.value.get()), o.name);
  return out;
}

}  // namespace tenet::lang::unparse_detail
