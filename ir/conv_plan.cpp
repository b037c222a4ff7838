// Recognises the three statements of a 2-D convolution (ir/conv_plan.h).
#include "ir/conv_plan.h"

#include <set>

namespace tenet::ir {

const char* role_name(ConvRole role) {
  switch (role) {
    case ConvRole::Forward:
      return "forward";
    case ConvRole::BackwardData:
      return "backward_data";
    case ConvRole::BackwardWeights:
      return "backward_weights";
  }
  return "?";
}

namespace {

/// The product's factors when the body is `read * read` of float32 tensors
/// of rank 4 with affine indices, in the result's type; else nullptr.
const ExprNode* factor(const Compute& c, int k) {
  const ExprNode& body = *c.body;
  if (body.kind != ExprKind::Binary || body.binop != BinOp::Mul) return nullptr;
  const ExprNode& r = *body.args[size_t(k)];
  if (r.kind != ExprKind::Read || r.has_computed_index() || r.type != ElemType::F32 ||
      r.tensor->rank() != 4 || !r.tensor->layout.empty())
    return nullptr;
  return &r;
}

/// Whether `a` is `index` alone.
bool is(const Affine& a, const std::string& index) {
  return a.is_plain_var() && a.terms[0].first == index;
}

/// Whether `a` is `outer_coef * outer + inner_coef * inner + offset` with a
/// constant offset; returns the offset.
std::optional<int64_t> two_terms(const Affine& a, const std::string& outer, int64_t outer_coef,
                                 const std::string& inner, int64_t inner_coef) {
  if (a.terms.size() != 2 || a.coef(outer) != outer_coef || a.coef(inner) != inner_coef)
    return std::nullopt;
  return a.offset.constant();
}

/// The reduce dimension of `index`, or nullptr.
const Dim* reduce_dim(const Compute& c, const std::string& index) {
  for (const Dim& d : c.reduce)
    if (d.index == index) return &d;
  return nullptr;
}

/// Whether `index` is a reduce index over the whole of `extent`.
bool spans(const Compute& c, const std::string& index, const SizeExpr& extent) {
  const Dim* d = reduce_dim(c, index);
  return d && d->lo == SizeExpr(0) && d->hi == extent;
}

/// The variable of a plain index, "" otherwise.
std::string var(const Affine& a) {
  return a.is_plain_var() ? a.terms[0].first : "";
}

bool distinct(std::initializer_list<std::string> names) {
  std::set<std::string> seen;
  for (const std::string& n : names)
    if (n.empty() || !seen.insert(n).second) return false;
  return true;
}

const std::vector<SizeExpr>& shape(const ExprNode& r) {
  return r.tensor->shape;
}

/// Whether `a` is the constant 0.
bool is_zero(const Affine& a) {
  return a.terms.empty() && a.offset == SizeExpr(0);
}

struct Window {
  int64_t stride = 1, pad = 0;
};

/// The stride and padding of `a` = S * outer + inner - P (S >= 1, P >= 0).
std::optional<Window> window(const Affine& a, const std::string& outer, const std::string& inner) {
  const int64_t s = a.coef(outer);
  if (s < 1) return std::nullopt;
  const std::optional<int64_t> offset = two_terms(a, outer, s, inner, 1);
  if (!offset || *offset > 0) return std::nullopt;
  return Window{s, -*offset};
}

/// The plan of `role` over an image [N, C, H, W], a filter [O, C/G, KH, KW] and
/// a map (the forward's result) [N, O, OH, OW], with these windows.
ConvPlan problem(ConvRole role, const std::vector<SizeExpr>& image,
                 const std::vector<SizeExpr>& filter, const std::vector<SizeExpr>& map, Window h,
                 Window v, bool depthwise) {
  ConvPlan plan;
  plan.role = role;
  plan.batch = image[0], plan.in_channels = image[1], plan.out_channels = map[1];
  plan.in_h = image[2], plan.in_w = image[3];
  plan.out_h = map[2], plan.out_w = map[3];
  plan.kernel_h = filter[2], plan.kernel_w = filter[3];
  plan.stride_h = h.stride, plan.pad_top = h.pad;
  plan.stride_w = v.stride, plan.pad_left = v.pad;
  plan.groups = depthwise ? image[1] : SizeExpr(1);
  return plan;
}

// y(n, o, p, q) +=! x?(n, c, S*p + i - P, S*q + j - P) * w(o, c, i, j), or depthwise
// (two reduce indices): y(n, g, p, q) +=! x?(n, g, ...) * w(g, 0, i, j)
std::optional<ConvPlan> forward(const Compute& c, const ExprNode& x, const ExprNode& w) {
  const std::string n = c.out[0].index, o = c.out[1].index, p = c.out[2].index, q = c.out[3].index;
  const std::string i = var(w.indices[2]), j = var(w.indices[3]);
  const bool depthwise = c.reduce.size() == 2;
  const std::string ci = depthwise ? o : var(w.indices[1]);  // the image's channel
  const bool channels_meet =
      depthwise ? is_zero(w.indices[1]) && shape(w)[1] == SizeExpr(1) && shape(x)[1] == shape(w)[0]
                : spans(c, ci, shape(x)[1]) && shape(x)[1] == shape(w)[1];
  if (!channels_meet || !is(w.indices[0], o) || !distinct({ci, i, j}) || !is(x.indices[0], n) ||
      !is(x.indices[1], ci))
    return std::nullopt;
  const auto h = window(x.indices[2], p, i), v = window(x.indices[3], q, j);
  if (!h || !v || !spans(c, i, shape(w)[2]) || !spans(c, j, shape(w)[3]) ||
      shape(x)[0] != c.result->shape[0] || shape(w)[0] != c.result->shape[1])
    return std::nullopt;
  return problem(ConvRole::Forward, shape(x), shape(w), c.result->shape, *h, *v, depthwise);
}

// dw(o, c, i, j) +=! dy(n, o, p, q) * x?(n, c, S*p + i - P, S*q + j - P), or depthwise
// (the image's channel is the result's first index; the filter's one input channel an
// index of extent 1 that neither factor reads): dw(g, 0, i, j) +=! dy(n, g, ...) * x?(n, g, ...)
std::optional<ConvPlan> backward_weights(const Compute& c, const ExprNode& dy, const ExprNode& x) {
  const std::string o = c.out[0].index, ci = c.out[1].index, i = c.out[2].index, j = c.out[3].index;
  const std::string n = var(dy.indices[0]), p = var(dy.indices[2]), q = var(dy.indices[3]);
  const bool depthwise = is(x.indices[1], o) && c.result->shape[1] == SizeExpr(1);
  if (!distinct({n, p, q}) || !is(dy.indices[1], o) || !is(x.indices[0], n) ||
      !is(x.indices[1], depthwise ? o : ci))
    return std::nullopt;
  const auto h = window(x.indices[2], p, i), v = window(x.indices[3], q, j);
  if (!h || !v || !spans(c, n, shape(dy)[0]) || shape(dy)[0] != shape(x)[0] ||
      !spans(c, p, shape(dy)[2]) || !spans(c, q, shape(dy)[3]) ||
      shape(dy)[1] != c.result->shape[0] ||
      shape(x)[1] != (depthwise ? c.result->shape[0] : c.result->shape[1]))
    return std::nullopt;
  return problem(ConvRole::BackwardWeights, shape(x), c.result->shape, shape(dy), *h, *v,
                 depthwise);
}

// dx(n, c, a, b) +=! dy?(n, o, a - i + P, b - j + P) * w(o, c, i, j), or depthwise
// (two reduce indices): dx(n, g, a, b) +=! dy?(n, g, ...) * w(g, 0, i, j)
std::optional<ConvPlan> backward_data_taps(const Compute& c, const ExprNode& dy,
                                           const ExprNode& w) {
  const std::string n = c.out[0].index, ci = c.out[1].index, a = c.out[2].index, b = c.out[3].index;
  const std::string i = var(w.indices[2]), j = var(w.indices[3]);
  const bool depthwise = c.reduce.size() == 2;
  const std::string o = depthwise ? ci : var(w.indices[0]);  // the filter's output channel
  const bool channels_meet =
      depthwise
          ? is_zero(w.indices[1]) && shape(w)[1] == SizeExpr(1) &&
                shape(dy)[1] == c.result->shape[1]
          : is(w.indices[1], ci) && shape(w)[1] == c.result->shape[1] && spans(c, o, shape(w)[0]);
  if (!channels_meet || !is(w.indices[0], o) || !distinct({o, i, j}) || !is(dy.indices[0], n) ||
      !is(dy.indices[1], o))
    return std::nullopt;
  const auto top = two_terms(dy.indices[2], a, 1, i, -1);
  const auto left = two_terms(dy.indices[3], b, 1, j, -1);
  if (!top || !left || *top < 0 || *left < 0 || shape(w)[0] != shape(dy)[1] ||
      !spans(c, i, shape(w)[2]) || !spans(c, j, shape(w)[3]) || shape(dy)[0] != c.result->shape[0])
    return std::nullopt;
  return problem(ConvRole::BackwardData, c.result->shape, shape(w), shape(dy), Window{1, *top},
                 Window{1, *left}, depthwise);
}

// dx(n, c, a, b) +=! dy(n, o, p, q) * w?(o, c, a - S*p + P, b - S*q + P)
std::optional<ConvPlan> backward_data_windows(const Compute& c, const ExprNode& dy,
                                              const ExprNode& w) {
  const std::string n = c.out[0].index, ci = c.out[1].index, a = c.out[2].index, b = c.out[3].index;
  const std::string o = var(dy.indices[1]), p = var(dy.indices[2]), q = var(dy.indices[3]);
  if (!distinct({o, p, q}) || !is(dy.indices[0], n) || !is(w.indices[0], o) ||
      !is(w.indices[1], ci))
    return std::nullopt;
  const int64_t sh = -w.indices[2].coef(p), sw = -w.indices[3].coef(q);
  if (sh < 1 || sw < 1) return std::nullopt;
  const auto top = two_terms(w.indices[2], a, 1, p, -sh);
  const auto left = two_terms(w.indices[3], b, 1, q, -sw);
  if (!top || !left || *top < 0 || *left < 0 || !spans(c, o, shape(dy)[1]) ||
      shape(w)[0] != shape(dy)[1] || !spans(c, p, shape(dy)[2]) || !spans(c, q, shape(dy)[3]) ||
      shape(dy)[0] != c.result->shape[0] || shape(w)[1] != c.result->shape[1])
    return std::nullopt;
  return problem(ConvRole::BackwardData, c.result->shape, shape(w), shape(dy), Window{sh, *top},
                 Window{sw, *left}, false);
}

}  // namespace

std::optional<ConvPlan> plan_convolution(const Compute& c) {
  if (c.op != ReduceOp::Sum || c.result->type != ElemType::F32 || c.result->rank() != 4 ||
      !c.result->layout.empty() || (c.init && !c.init->layout.empty()) || c.out.size() != 4 ||
      (c.reduce.size() != 3 && c.reduce.size() != 2))
    return std::nullopt;
  const ExprNode* f[2] = {factor(c, 0), factor(c, 1)};
  if (!f[0] || !f[1]) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const ExprNode& first = *f[k];
    const ExprNode& second = *f[1 - k];
    std::optional<ConvPlan> plan;
    if ((plan = forward(c, first, second))) {
      plan->image = k, plan->filter = 1 - k;
    } else if ((plan = backward_weights(c, first, second))) {
      plan->grad = k, plan->image = 1 - k;
    } else if ((plan = backward_data_taps(c, first, second)) ||
               (plan = backward_data_windows(c, first, second))) {
      plan->grad = k, plan->filter = 1 - k;
    }
    if (plan) return plan;
  }
  return std::nullopt;
}

std::string describe(const ConvPlan& plan, const Compute& statement) {
  // An operand as "name[shape]": a factor of the product, or the result (-1).
  auto operand = [&](int factor) {
    const Value& v = factor < 0 ? *statement.result : *statement.body->args[size_t(factor)]->tensor;
    std::string dims;
    for (const SizeExpr& d : v.shape) dims += (dims.empty() ? "" : ", ") + d.str();
    return v.name + "[" + dims + "]";
  };
  const char* call = plan.role == ConvRole::Forward        ? "conv"
                     : plan.role == ConvRole::BackwardData ? "conv_data"
                                                           : "conv_weights";
  // The two inputs in the library's order: (image, filter), (grad, filter), (image, grad).
  const int first = plan.role == ConvRole::BackwardData ? plan.grad : plan.image;
  const int second = plan.role == ConvRole::BackwardWeights ? plan.grad : plan.filter;
  std::string text = std::string(role_name(plan.role)) + ": " + operand(-1) + " = " + call + "(" +
                     operand(first) + ", " + operand(second);
  if (plan.groups != SizeExpr(1)) text += ", groups " + plan.groups.str();
  text += ", stride " + std::to_string(plan.stride_h) + "x" + std::to_string(plan.stride_w) +
          ", pad " + std::to_string(plan.pad_top) + "x" + std::to_string(plan.pad_left) + ")";
  return statement.init ? text + " + " + statement.init->name : text;
}

}  // namespace tenet::ir
