#include "ir/verify.h"

#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/reshape.h"
#include "support/error.h"

namespace tenet::ir {

namespace {

// Checks `cond`; the message is built only when it fails (verification runs
// after every pass, on every statement: eager messages cost more than the checks).
#define VERIFY(cond, what)   \
  do {                       \
    if (!(cond)) fail(what); \
  } while (0)

class Verifier {
 public:
  Verifier(const Function& fn, const std::string& context)
      : fn_(fn), context_(context), size_params_(fn.size_params.begin(), fn.size_params.end()) {}

  void run() {
    for (const auto& v : fn_.inputs) define(v, "input");
    std::vector<std::set<const Value*>> scopes(1);
    for (const auto& v : fn_.inputs) scopes[0].insert(v.get());
    block(fn_.body, scopes, {});
    VERIFY(fn_.output_names.size() == fn_.outputs.size(),
           "output_names and outputs differ in length");
    std::set<std::string> out_names;
    std::unordered_map<std::string, const Value*> input_names;
    for (const auto& in : fn_.inputs) input_names.emplace(in->name, in.get());
    for (size_t i = 0; i < fn_.output_names.size(); ++i) {
      const std::string& n = fn_.output_names[i];
      VERIFY(!n.empty() && out_names.insert(n).second, "output name '" + n + "' empty or repeated");
      auto in = input_names.find(n);
      // An output named like another input updates it: same type and shape.
      VERIFY(in == input_names.end() || fn_.outputs[i].get() == in->second ||
                 (fn_.outputs[i] && fn_.outputs[i]->type == in->second->type &&
                  fn_.outputs[i]->shape == in->second->shape),
             "output name '" + n + "' is the name of an input of another type or shape");
    }
    for (const auto& v : fn_.outputs) {
      VERIFY(v != nullptr, "null output");
      VERIFY(scopes[0].count(v.get()), "output " + v->name + " is not defined at top level");
    }
    gradients();
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    std::ostringstream os;
    os << "IR verifier failed after " << context_ << ": " << what << " (function " << fn_.name
       << ")";
    internal_error(__FILE__, __LINE__, os.str());
  }

  void define(const ValuePtr& v, const char* how) {
    VERIFY(v != nullptr, std::string("null value defined as ") + how);
    VERIFY(ids_.insert(v->id).second,
           "value id " + std::to_string(v->id) + " (" + v->name + ") defined twice");
    VERIFY(names_.insert(v->name).second, "value name " + v->name + " defined twice");
    for (const auto& d : v->shape)
      for (const auto& s : d.symbols()) VERIFY(is_size(s), "unknown size " + s + " in " + v->name);
    if (!v->layout.empty()) {
      std::set<int> dims(v->layout.begin(), v->layout.end());
      VERIFY(int(v->layout.size()) == v->rank() && int(dims.size()) == v->rank() &&
                 *dims.begin() == 0 && *dims.rbegin() == v->rank() - 1,
             "layout of " + v->name + " is not a permutation");
    }
  }

  // Function::gradient_inputs: one per output when given; each gradient is of
  // a distinct float input, with its type and shape.
  void gradients() {
    if (fn_.gradient_inputs.empty()) return;
    VERIFY(fn_.gradient_inputs.size() == fn_.outputs.size(),
           "gradient_inputs and outputs differ in length");
    std::set<int> seen;
    for (size_t i = 0; i < fn_.outputs.size(); ++i) {
      const int k = fn_.gradient_inputs[i];
      if (k < 0) continue;
      VERIFY(k < int(fn_.inputs.size()), "output " + fn_.output_names[i] +
                                             " is the gradient of input " + std::to_string(k) +
                                             ", which does not exist");
      const Value& in = *fn_.inputs[size_t(k)];
      VERIFY(seen.insert(k).second, "two outputs are the gradient of " + in.name);
      VERIFY(
          is_float(in.type) && fn_.outputs[i]->type == in.type && fn_.outputs[i]->shape == in.shape,
          "output " + fn_.output_names[i] + ", the gradient of " + in.name +
              ", is not a float of its type and shape");
    }
  }

  bool is_size(const std::string& s) const { return size_params_.count(s) != 0; }

  void size_ok(const SizeExpr& e, const std::string& where) {
    for (const auto& s : e.symbols()) VERIFY(is_size(s), "unknown size " + s + " in " + where);
  }

  bool in_scope(const std::vector<std::set<const Value*>>& scopes, const Value* v) {
    for (const auto& s : scopes)
      if (s.count(v)) return true;
    return false;
  }

  void expr(const Expr& e, const std::set<std::string>& indices,
            const std::vector<std::set<const Value*>>& scopes, const std::string& where) {
    VERIFY(e != nullptr, "null expression in " + where);
    for (const Expr& a : e->args)  // float16 is a storage type, computed in float32
      VERIFY(a == nullptr || a->type != ElemType::F16 || e->kind == ExprKind::Cast,
             "a float16 operand of something other than a cast in " + where);
    switch (e->kind) {
      case ExprKind::Const:
        break;
      case ExprKind::Index:
        VERIFY(indices.count(e->index), "index " + e->index + " is not in the domain of " + where);
        VERIFY(e->type == ElemType::I64, "index expression is not int64");
        break;
      case ExprKind::Size:
        size_ok(e->size, where);
        break;
      case ExprKind::Read: {
        VERIFY(e->tensor != nullptr, "read of null tensor in " + where);
        VERIFY(in_scope(scopes, e->tensor.get()),
               "read of " + e->tensor->name + " out of scope in " + where);
        VERIFY(int(e->indices.size()) == e->tensor->rank(),
               "read of " + e->tensor->name + " has " + std::to_string(e->indices.size()) +
                   " indices for rank " + std::to_string(e->tensor->rank()));
        VERIFY(e->type == compute_type(e->tensor->type),
               "read type differs from tensor type in " + where);
        VERIFY(e->computed.empty() || e->computed.size() == e->indices.size(),
               "read of " + e->tensor->name + " has computed indices for some dimensions only");
        for (size_t d = 0; d < e->computed.size(); ++d) {
          if (!e->computed[d]) continue;
          VERIFY(e->computed[d]->type == ElemType::I64,
                 "a computed index of " + e->tensor->name + " is not int64 in " + where);
          VERIFY(stays_computed(e->computed[d], e->tensor->shape[d], e->guarded),
                 "a computed index of " + e->tensor->name + " is affine in " + where);
          expr(e->computed[d], indices, scopes, where);
        }
        for (const auto& a : e->indices) {
          std::set<std::string> seen;
          for (const auto& [name, c] : a.terms) {
            VERIFY(c != 0, "zero coefficient in an index of " + e->tensor->name);
            VERIFY(seen.insert(name).second, "repeated index " + name + " in one affine term");
            VERIFY(indices.count(name), "index " + name + " in a read of " + e->tensor->name +
                                            " is not in the domain of " + where);
          }
          size_ok(a.offset, where);
        }
        break;
      }
      case ExprKind::Unary:
        VERIFY(e->args.size() == 1, "unary arity");
        expr(e->args[0], indices, scopes, where);
        break;
      case ExprKind::Binary:
        VERIFY(e->args.size() == 2, "binary arity");
        expr(e->args[0], indices, scopes, where);
        expr(e->args[1], indices, scopes, where);
        VERIFY(e->args[0]->type == e->args[1]->type,
               std::string("operand types differ in ") + op_name(e->binop) + " in " + where);
        break;
      case ExprKind::Select:
        VERIFY(e->args.size() == 3, "select arity");
        for (const auto& a : e->args) expr(a, indices, scopes, where);
        VERIFY(e->args[0]->type == ElemType::Bool, "select condition is not bool in " + where);
        VERIFY(e->args[1]->type == e->args[2]->type && e->type == e->args[1]->type,
               "select branch types differ in " + where);
        break;
      case ExprKind::Cast:
        VERIFY(e->args.size() == 1, "cast arity");
        expr(e->args[0], indices, scopes, where);
        break;
    }
  }

  void compute(const Compute& c, std::vector<std::set<const Value*>>& scopes,
               const std::set<std::string>& loop_vars) {
    VERIFY(c.result != nullptr, "compute without a result");
    const std::string where = "the statement defining " + c.result->name;
    VERIFY(int(c.out.size()) == c.result->rank(),
           "out ranges do not match the rank of " + c.result->name);
    std::set<std::string> indices = loop_vars;
    for (size_t i = 0; i < c.out.size(); ++i) {
      const Dim& d = c.out[i];
      VERIFY(d.lo == SizeExpr(0), "out range of " + d.index + " does not start at 0 in " + where);
      VERIFY(d.hi == c.result->shape[i], "out range of " + d.index + " (" + d.hi.str() +
                                             ") is not the shape of " + c.result->name + " (" +
                                             c.result->shape[i].str() + ")");
      VERIFY(indices.insert(d.index).second, "index " + d.index + " bound twice in " + where);
      size_ok(d.hi, where);
    }
    for (const Dim& d : c.reduce) {
      VERIFY(indices.insert(d.index).second, "index " + d.index + " bound twice in " + where);
      size_ok(d.lo, where);
      size_ok(d.hi, where);
    }
    if (c.op == ReduceOp::None) {
      VERIFY(c.reduce.empty(), "assignment with reduce ranges in " + where);
      VERIFY(c.init == nullptr, "assignment with init in " + where);
    }
    if (c.init) {
      VERIFY(in_scope(scopes, c.init.get()), "init " + c.init->name + " out of scope in " + where);
      VERIFY(c.init->type == c.result->type && c.init->shape == c.result->shape,
             "init " + c.init->name + " differs in type or shape from " + c.result->name);
    }
    expr(c.body, indices, scopes, where);
    VERIFY(c.body->type == compute_type(c.result->type),
           "body type " + std::string(type_name(c.body->type)) + " differs from " + c.result->name +
               "'s " + std::string(type_name(c.result->type)));
    define(c.result, "compute result");
    scopes.back().insert(c.result.get());
  }

  // A statement marked as a reshape (ir/reshape.h): `y(out) = x(...)`, or
  // AD's accumulation `y(out) = init + x(...)`, reading x unguarded, of y's
  // type and element count.
  void reshape(const Compute& c) {
    const std::string where = "the reshape defining " + c.result->name;
    VERIFY(c.reduce.empty() && (c.op == ReduceOp::None || (c.op == ReduceOp::Sum && c.init)),
           "not an assignment or an accumulation onto an init: " + where);
    const Expr& read = c.body;
    VERIFY(read->kind == ExprKind::Read && !read->guarded,
           "the body is not one unguarded read in " + where);
    VERIFY(read->tensor->type == c.result->type, "the type changes in " + where);
    VERIFY(same_element_count(read->tensor->shape, c.result->shape),
           "the element count of " + read->tensor->name + " (" +
               element_count_text(read->tensor->shape) + ") changes in " + where + " (" +
               element_count_text(c.result->shape) + ")");
  }

  void loop(const Loop& l, std::vector<std::set<const Value*>>& scopes,
            std::set<std::string> loop_vars) {
    VERIFY(l.trip > 0, "loop over " + l.var + " has trip count " + std::to_string(l.trip));
    VERIFY(loop_vars.insert(l.var).second, "loop variable " + l.var + " shadows another");
    scopes.emplace_back();
    for (const auto& c : l.carried) {
      VERIFY(c.next && c.result, "carried tensor without next/result in loop " + l.var);
      VERIFY((c.init == nullptr) == (c.param == nullptr),
             "carried tensor with only one of init/param");
      if (c.init) {
        VERIFY(in_scope(scopes, c.init.get()), "loop init " + c.init->name + " out of scope");
        VERIFY(c.param->type == c.init->type && c.param->shape == c.init->shape,
               "loop param " + c.param->name + " differs from its init");
        define(c.param, "loop param");
        scopes.back().insert(c.param.get());
      }
    }
    block_in(l.body, scopes, loop_vars);
    for (const auto& c : l.carried) {
      VERIFY(scopes.back().count(c.next.get()) || in_scope(scopes, c.next.get()),
             "loop next " + c.next->name + " is not defined");
      if (c.param)
        VERIFY(c.next->type == c.param->type && c.next->shape == c.param->shape,
               "loop next " + c.next->name + " differs from its param " + c.param->name);
      VERIFY(c.result->type == c.next->type && c.result->shape == c.next->shape,
             "loop result " + c.result->name + " differs from " + c.next->name);
    }
    scopes.pop_back();
    for (const auto& c : l.carried) {
      define(c.result, "loop result");
      scopes.back().insert(c.result.get());
    }
  }

  void block_in(const std::vector<Stmt>& body, std::vector<std::set<const Value*>>& scopes,
                const std::set<std::string>& loop_vars) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::Compute) {
        compute(s.compute, scopes, loop_vars);
        if (s.annotations.reshape) reshape(s.compute);
      } else {
        VERIFY(s.loop != nullptr, "loop statement without a loop");
        loop(*s.loop, scopes, loop_vars);
      }
    }
  }

  void block(const std::vector<Stmt>& body, std::vector<std::set<const Value*>>& scopes,
             const std::set<std::string>& loop_vars) {
    block_in(body, scopes, loop_vars);
  }

  const Function& fn_;
  const std::string& context_;
  std::unordered_set<std::string> size_params_;
  std::set<int> ids_;
  std::set<std::string> names_;
};

#undef VERIFY

}  // namespace

void verify(const Function& fn, const std::string& context) {
  Verifier(fn, context).run();
}

void verify(const Module& m, const std::string& context) {
  for (const auto& f : m.functions) verify(f, context);
}

}  // namespace tenet::ir
