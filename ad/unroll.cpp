#include "ad/unroll.h"

#include "ad/expr_util.h"
#include "support/error.h"

namespace tenet::ad {

using ir::Stmt;
using ir::StmtKind;
using ir::ValuePtr;

namespace {

// How many Compute statements a block becomes once unrolled (saturating).
size_t unrolled_size(const std::vector<Stmt>& body) {
  size_t n = 0;
  for (const Stmt& s : body) {
    size_t k = s.kind == StmtKind::Compute ? 1 : 0;
    if (s.kind == StmtKind::Loop) {
      size_t inner = unrolled_size(s.loop->body);
      k = inner > kMaxUnrolledStatements ? inner : inner * size_t(s.loop->trip);
    }
    n += k;
    if (n > kMaxUnrolledStatements) return kMaxUnrolledStatements + 1;
  }
  return n;
}

class Copier {
 public:
  Copier(ir::FunctionBuilder& fb, const FailAt& fail, ForwardCopy& out)
      : fb_(fb), fail_(fail), out_(out) {}

  // `suffix` and `note` describe the enclosing unrolled iterations ("" at top level).
  void block(const std::vector<Stmt>& body, Rewrite& rw, const std::string& suffix,
             const std::string& note) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::Compute)
        compute(s, rw, suffix, note);
      else
        loop(s, rw, suffix, note);
    }
  }

 private:
  void compute(const Stmt& s, Rewrite& rw, const std::string& suffix, const std::string& note) {
    const ir::Compute& c = s.compute;
    ir::Expr body = rewrite(c.body, rw);
    ValuePtr init = c.init ? lookup(rw, c.init) : nullptr;
    std::string name = suffix.empty() ? c.result->name : stem(c.result->name) + suffix;
    ElemType type = rw.float_type && is_float(c.result->type) ? *rw.float_type : c.result->type;
    ValuePtr result = fb_.compute(name, c.out, c.reduce, c.op, body, init, type, s.span, s.source);
    ir::Annotations& annotations = fb_.annotations();
    annotations = s.annotations;
    if (!note.empty()) {
      annotations.ad = ir::AdOrigin::Unrolled;
      annotations.ad_detail = note;
    }
    rw.values[c.result.get()] = result;
    out_.stmts.push_back({ir::Compute{result, c.out, c.reduce, c.op, init, body}, s.span, s.source,
                          s.annotations.reshape});
  }

  void loop(const Stmt& s, Rewrite& rw, const std::string& suffix, const std::string& note) {
    const ir::Loop& l = *s.loop;
    size_t size = unrolled_size({s});
    if (out_.stmts.size() + size > kMaxUnrolledStatements)
      fail_(s.span, "cannot differentiate through loop '" + l.var + "': unrolling its " +
                        std::to_string(l.trip) + " iterations would give more than " +
                        std::to_string(kMaxUnrolledStatements) + " statements");
    std::vector<ValuePtr> state;  // the carried tensors entering the current iteration
    for (const auto& c : l.carried) state.push_back(c.init ? lookup(rw, c.init) : nullptr);
    for (int64_t k = 0; k < l.trip; ++k) {
      Rewrite inner = rw;
      inner.indices[l.var] = ir::affine_const(k);
      for (size_t i = 0; i < l.carried.size(); ++i)
        if (l.carried[i].param) inner.values[l.carried[i].param.get()] = state[i];
      std::string it = l.var + std::to_string(k);
      std::string it_note = l.var + "=" + std::to_string(k);
      block(l.body, inner, suffix + "_" + it, note.empty() ? it_note : note + ", " + it_note);
      for (size_t i = 0; i < l.carried.size(); ++i) state[i] = lookup(inner, l.carried[i].next);
    }
    for (size_t i = 0; i < l.carried.size(); ++i) rw.values[l.carried[i].result.get()] = state[i];
  }

  static ValuePtr lookup(const Rewrite& rw, const ValuePtr& v) {
    auto it = rw.values.find(v.get());
    TENET_ASSERT(it != rw.values.end(), "value " << v->name << " has no copy in the gradient");
    return it->second;
  }

  ir::FunctionBuilder& fb_;
  const FailAt& fail_;
  ForwardCopy& out_;
};

}  // namespace

ForwardCopy copy_forward(const ir::Function& fn, ir::FunctionBuilder& fb,
                         const std::map<const ir::Value*, ValuePtr>& inputs, const FailAt& fail,
                         std::optional<ElemType> float_type) {
  ForwardCopy out;
  Rewrite rw;
  rw.values = inputs;
  rw.float_type = float_type;
  Copier(fb, fail, out).block(fn.body, rw, "", "");
  out.values = std::move(rw.values);
  return out;
}

}  // namespace tenet::ad
