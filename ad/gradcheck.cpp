#include "ad/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ad/retype.h"
#include "ir/bind.h"
#include "ir/builder.h"
#include "ir/interp.h"
#include "support/error.h"

namespace tenet::ad {

using ir::ValuePtr;

namespace {

Tensor to_f64(const Tensor& t) {
  return is_float(t.type()) ? t.cast(ElemType::F64) : t;
}

size_t position_of(const std::vector<ValuePtr>& values, const std::string& name) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i]->name == name) return i;
  TENET_UNREACHABLE("resolved name " + name + " not found");
}

// "x[1, 0, 2]"
std::string entry_name(const std::string& input, const Tensor& t, int64_t flat) {
  std::vector<int64_t> index(size_t(t.rank()));
  for (int d = t.rank() - 1; d >= 0; --d) {
    index[size_t(d)] = flat % t.shape()[size_t(d)];
    flat /= t.shape()[size_t(d)];
  }
  std::string s = input + "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

std::string num(double v) {
  if (std::isnan(v)) return "nan";  // printf may say "-nan"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// L(x) = sum over outputs of <cotangent, output>, summed with compensation
// (Neumaier) so that the difference of two nearby L values keeps its digits.
class Objective {
 public:
  Objective(const ir::Function& fn, std::vector<size_t> outputs, std::vector<Tensor> cotangents)
      : fn_(fn), outputs_(std::move(outputs)), cotangents_(std::move(cotangents)) {}

  double operator()(const std::vector<Tensor>& inputs) const {
    std::vector<Tensor> out = ir::interpret(fn_, inputs, {}, {ElemType::F64});
    double sum = 0, compensation = 0;
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const Tensor& o = out[outputs_[k]];
      for (int64_t e = 0; e < o.numel(); ++e) {
        double term = o.get(e) * (cotangents_.empty() ? 1.0 : cotangents_[k].get(e));
        double t = sum + term;
        compensation += std::abs(sum) >= std::abs(term) ? (sum - t) + term : (term - t) + sum;
        sum = t;
      }
    }
    // Past an infinity the compensation is NaN (inf - inf): the sum says what happened.
    return std::isfinite(sum) ? sum + compensation : sum;
  }

 private:
  const ir::Function& fn_;
  std::vector<size_t> outputs_;
  std::vector<Tensor> cotangents_;  // empty: the scalar output, seed 1
};

struct Entry {
  int64_t flat;
  double ad, central, forward, backward;
};

bool finite(const Entry& e) {
  return std::isfinite(e.ad) && std::isfinite(e.central) && std::isfinite(e.forward) &&
         std::isfinite(e.backward);
}

InputCheck judge(const std::string& name, const Tensor& x, const std::vector<Entry>& entries,
                 const GradcheckOptions& opt, std::vector<std::string>& warnings) {
  InputCheck check;
  check.input = name;
  double scale = 0;  // over finite entries: an infinite one must not hide the others' errors
  for (const Entry& e : entries)
    if (finite(e)) scale = std::max({scale, std::abs(e.ad), std::abs(e.central)});
  const double floor = 1e-3 * scale;
  const Entry* first_kink = nullptr;
  for (const Entry& e : entries) {
    ++check.checked;
    double reference = e.central, err = INFINITY, rel = INFINITY;
    if (!finite(e)) {  // NaN or inf: fails, whatever a comparison with NaN would say
      if (check.problem.empty())
        check.problem = entry_name(name, x, e.flat) + ": gradient " + num(e.ad) +
                        ", finite differences " + num(e.central) + " (central), " +
                        num(e.backward) + " and " + num(e.forward) + " (one-sided)";
    } else {
      double denom = std::max({std::abs(e.central), std::abs(e.ad), floor});
      err = std::abs(e.ad - e.central);
      double gap = std::abs(e.forward - e.backward);
      if (gap > opt.kink_tolerance * std::max({std::abs(e.forward), std::abs(e.backward), floor})) {
        // A kink: compare with the nearer end of [one-sided, other one-sided].
        ++check.kinks;
        if (!first_kink) first_kink = &e;
        double lo = std::min(e.forward, e.backward), hi = std::max(e.forward, e.backward);
        reference = std::clamp(e.ad, lo, hi);
        err = std::abs(e.ad - reference);
        denom = std::max({std::abs(lo), std::abs(hi), floor});
      }
      rel = denom > 0 ? err / denom : 0;  // denom is 0 only when ad and fd are both 0
    }
    check.max_abs = std::max(check.max_abs, err);
    if (check.worst < 0 || rel > check.max_rel) {
      check.max_rel = rel;
      check.worst = e.flat;
      check.worst_ad = e.ad;
      check.worst_fd = reference;
    }
  }
  check.pass = check.problem.empty() && check.max_rel <= opt.tolerance;
  if (first_kink)
    warnings.push_back(name + ": " + std::to_string(check.kinks) +
                       " entries at non-differentiable points (a relu/abs kink or a max/min tie), "
                       "compared with one-sided differences; first " +
                       entry_name(name, x, first_kink->flat) + ": one-sided derivatives " +
                       num(first_kink->backward) + " (below) and " + num(first_kink->forward) +
                       " (above), gradient " + num(first_kink->ad));
  return check;
}

void validate(const GradcheckOptions& opt) {
  if (!(std::isfinite(opt.step) && opt.step > 0))
    throw BindError("gradcheck: the step must be a positive number, not " + num(opt.step));
  if (!(opt.tolerance >= 0))
    throw BindError("gradcheck: the tolerance must be a non-negative number, not " +
                    num(opt.tolerance));
  if (!(opt.kink_tolerance >= 0))
    throw BindError("gradcheck: the kink tolerance must be a non-negative number, not " +
                    num(opt.kink_tolerance));
  if (opt.max_entries < 0)
    throw BindError("gradcheck: max_entries must be non-negative (0: all), not " +
                    std::to_string(opt.max_entries));
}

}  // namespace

GradcheckReport gradcheck(const ir::Function& fn, const GradcheckOptions& opt) {
  validate(opt);
  std::vector<std::string> wrt = resolve_wrt(fn, opt.request);
  std::vector<std::string> outs = resolve_outputs(fn, opt.request);
  ir::Function fn64 = with_float_type(fn, ElemType::F64);
  ir::Function grad = opt.gradient ? with_float_type(*opt.gradient, ElemType::F64)
                                   : differentiate(fn64, opt.request);

  std::vector<Tensor> inputs;
  std::vector<Tensor> given =
      opt.inputs.empty() ? ir::random_inputs(fn, opt.sizes, opt.seed) : opt.inputs;
  TENET_ASSERT(given.size() == fn.inputs.size(), "gradcheck: wrong number of inputs");
  for (const Tensor& t : given) inputs.push_back(to_f64(t));
  ir::SizeBindings sizes = ir::bind_sizes(fn64, inputs, {});

  // Positions, not names: unrolling renames loop results (v.1 becomes v_it2).
  std::vector<size_t> out_positions;
  std::vector<Tensor> cotangents;
  for (size_t k = 0; k < outs.size(); ++k) {
    size_t pos = size_t(std::find(fn.output_names.begin(), fn.output_names.end(), outs[k]) -
                        fn.output_names.begin());
    out_positions.push_back(pos);
    if (opt.request.vjp)
      cotangents.push_back(random_tensor(ElemType::F64,
                                         ir::concrete_shape(*fn64.outputs[pos], sizes),
                                         opt.seed * 7919 + 1000 + k));
  }
  std::vector<Tensor> grad_inputs = inputs;
  for (const Tensor& c : cotangents) grad_inputs.push_back(c);
  std::vector<Tensor> grad_out = ir::interpret(grad, grad_inputs, {}, {ElemType::F64});

  Objective loss(fn64, out_positions, cotangents);
  const double base = loss(inputs);
  GradcheckReport report;
  if (!std::isfinite(base)) {
    report.pass = false;
    report.errors.push_back(
        "the checked function is " + num(base) +
        (opt.request.vjp ? " (summed against the cotangents)" : "") +
        " at the inputs: finite differences of it mean nothing (inputs outside its domain?)");
  }
  for (size_t k = 0; k < wrt.size(); ++k) {
    size_t pos = position_of(fn.inputs, wrt[k]);
    const Tensor& ad = grad_out[fn64.outputs.size() + k];
    Tensor x = inputs[pos].cast(ElemType::F64);  // a private copy to perturb
    std::vector<Tensor> probe = inputs;
    probe[pos] = x;
    int64_t n = x.numel();
    int64_t count = opt.max_entries > 0 ? std::min(n, opt.max_entries) : n;
    std::vector<Entry> entries;
    for (int64_t j = 0; j < count; ++j) {
      int64_t flat = count == n ? j : j * n / count;
      double x0 = x.get(flat);
      double h = opt.step * std::max(1.0, std::abs(x0));
      x.set(flat, x0 + h);
      double up = loss(probe);
      x.set(flat, x0 - h);
      double down = loss(probe);
      x.set(flat, x0);
      entries.push_back(
          {flat, ad.get(flat), (up - down) / (2 * h), (up - base) / h, (base - down) / h});
    }
    InputCheck check = judge(wrt[k], x, entries, opt, report.warnings);
    report.pass = report.pass && check.pass;
    if (!check.problem.empty()) report.errors.push_back(check.problem + ": not finite");
    report.inputs.push_back(check);
  }
  return report;
}

std::string format_report(const GradcheckReport& report) {
  std::ostringstream os;
  char line[160];
  std::snprintf(line, sizeof line, "%-16s %8s %12s %12s  %s\n", "input", "entries", "max abs err",
                "max rel err", "pass");
  os << line;
  for (const InputCheck& c : report.inputs) {
    std::snprintf(line, sizeof line, "%-16s %8lld %12.3g %12.3g  %s\n", c.input.c_str(),
                  static_cast<long long>(c.checked), c.max_abs, c.max_rel, c.pass ? "yes" : "NO");
    os << line;
  }
  for (const std::string& w : report.warnings) os << "warning: " << w << "\n";
  for (const std::string& e : report.errors) os << "error: " << e << "\n";
  return os.str();
}

}  // namespace tenet::ad
