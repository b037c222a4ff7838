#include "train/init.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "train/rng.h"

namespace tenet::train {
namespace {

// ---- the table of initialisers ------------------------------------------

// One argument of an initialiser. Positional arguments may also be named.
struct ArgInfo {
  const char* name;
  bool positional;
  std::optional<double> default_value;  // nullopt: required (unless a kind-specific rule)
};

struct KindInfo {
  InitKind kind;
  const char* name;
  std::vector<ArgInfo> args;
};

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> table = {
      {InitKind::Uniform, "uniform", {{"low", true, {}}, {"high", true, {}}}},
      {InitKind::Normal, "normal", {{"mean", true, {}}, {"std", true, {}}}},
      {InitKind::TruncatedNormal, "truncated_normal", {{"mean", true, {}}, {"std", true, {}}}},
      {InitKind::KaimingUniform,
       "kaiming_uniform",
       {{"fan_in", false, 0.0}, {"fan_out", false, 0.0}, {"gain", false, std::sqrt(2.0)}}},
      {InitKind::KaimingNormal,
       "kaiming_normal",
       {{"fan_in", false, 0.0}, {"fan_out", false, 0.0}, {"gain", false, std::sqrt(2.0)}}},
      {InitKind::XavierUniform,
       "xavier_uniform",
       {{"fan_in", false, {}}, {"fan_out", false, {}}, {"gain", false, 1.0}}},
      {InitKind::XavierNormal,
       "xavier_normal",
       {{"fan_in", false, {}}, {"fan_out", false, {}}, {"gain", false, 1.0}}},
      {InitKind::Zeros, "zeros", {}},
      {InitKind::Ones, "ones", {}},
      {InitKind::Constant, "constant", {{"value", true, {}}}},
  };
  return table;
}

const KindInfo& info(InitKind kind) {
  for (const KindInfo& k : kinds())
    if (k.kind == kind) return k;
  TENET_UNREACHABLE("unknown InitKind");
}

bool is_kaiming(InitKind k) {
  return k == InitKind::KaimingUniform || k == InitKind::KaimingNormal;
}
bool is_xavier(InitKind k) {
  return k == InitKind::XavierUniform || k == InitKind::XavierNormal;
}

// The spec's field for an argument name of its kind (Spec: InitSpec or const InitSpec).
template <typename Spec>
auto* field(Spec& s, std::string_view arg) {
  if (arg == "low") return &s.low;
  if (arg == "high") return &s.high;
  if (arg == "mean") return &s.mean;
  if (arg == "std") return &s.stddev;
  if (arg == "value") return &s.value;
  if (arg == "fan_in") return &s.fan_in;
  if (arg == "fan_out") return &s.fan_out;
  if (arg == "gain") return &s.gain;
  TENET_UNREACHABLE("unknown initialiser argument");
}

// Shortest text that reads back to the same double.
std::string number_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  TENET_ASSERT(ec == std::errc(), "to_chars failed");
  return std::string(buf, end);
}

std::string three_digits(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// ---- the parser --------------------------------------------------------

class SpecParser {
 public:
  explicit SpecParser(std::string_view text) : text_(text) {}

  InitSpec parse() {
    skip_space();
    const std::string name = identifier("an initialiser name");
    const KindInfo* kind = find_kind(name);
    InitSpec spec;
    spec.kind = kind->kind;
    std::vector<bool> given(kind->args.size(), false);
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      ++pos_;
      parse_arguments(*kind, spec, given);
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(text_.substr(pos_)) + "'");
    apply_defaults(*kind, spec, given);
    check(spec);
    return spec;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InitError("bad initialiser \"" + std::string(text_) + "\": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  static bool ident_char(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
  }

  std::string identifier(const char* what) {
    const size_t start = pos_;
    while (pos_ < text_.size() && ident_char(text_[pos_], pos_ == start)) ++pos_;
    if (pos_ == start) fail(std::string("expected ") + what);
    return std::string(text_.substr(start, pos_ - start));
  }

  const KindInfo* find_kind(const std::string& name) const {
    std::string known;
    for (const KindInfo& k : kinds()) {
      if (name == k.name) return &k;
      known += known.empty() ? "" : ", ";
      known += k.name;
    }
    fail("unknown initialiser '" + name + "' (known: " + known + ")");
  }

  double number() {
    skip_space();
    const char* begin = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+'
    double v = 0;
    auto [stop, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || stop == begin) fail("expected a number at '" + rest() + "'");
    if (!std::isfinite(v)) fail("numbers must be finite");
    pos_ = size_t(stop - text_.data());
    return v;
  }

  std::string rest() const { return std::string(text_.substr(pos_)); }

  void parse_arguments(const KindInfo& kind, InitSpec& spec, std::vector<bool>& given) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
      return;
    }
    size_t positional = 0;
    for (;;) {
      skip_space();
      const size_t arg = argument_slot(kind, positional);
      if (given[arg]) fail(std::string("argument '") + kind.args[arg].name + "' given twice");
      given[arg] = true;
      *field(spec, kind.args[arg].name) = number();
      skip_space();
      if (pos_ >= text_.size()) fail("missing ')'");
      if (text_[pos_] == ')') {
        ++pos_;
        return;
      }
      if (text_[pos_] != ',') fail("expected ',' or ')' at '" + rest() + "'");
      ++pos_;
    }
  }

  // Reads "name =" when present and returns the argument's index; otherwise
  // the next positional argument's.
  size_t argument_slot(const KindInfo& kind, size_t& positional) {
    const size_t start = pos_;
    if (pos_ < text_.size() && ident_char(text_[pos_], true)) {
      const std::string name = identifier("an argument name");
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '=') fail("expected '=' after '" + name + "'");
      ++pos_;
      for (size_t i = 0; i < kind.args.size(); ++i)
        if (name == kind.args[i].name) return i;
      fail("unknown argument '" + name + "' for " + kind.name + expected_args(kind));
    }
    pos_ = start;
    if (positional >= kind.args.size() || !kind.args[positional].positional) {
      if (is_kaiming(kind.kind) || is_xavier(kind.kind))
        fail(std::string(kind.name) + " takes named arguments only" + expected_args(kind));
      fail(std::string("too many arguments for ") + kind.name + expected_args(kind));
    }
    return positional++;
  }

  static std::string expected_args(const KindInfo& kind) {
    if (kind.args.empty()) return " (it takes none)";
    std::string s = " (";
    for (size_t i = 0; i < kind.args.size(); ++i) {
      s += i ? ", " : "";
      s += kind.args[i].name;
      if (!kind.args[i].positional) s += "=";
    }
    return s + ")";
  }

  void apply_defaults(const KindInfo& kind, InitSpec& spec, std::vector<bool>& given) const {
    for (size_t i = 0; i < kind.args.size(); ++i) {
      if (given[i]) continue;
      if (!kind.args[i].default_value)
        fail(std::string("missing argument '") + kind.args[i].name + "'" + expected_args(kind));
      *field(spec, kind.args[i].name) = *kind.args[i].default_value;
    }
    if (is_kaiming(kind.kind) && given[0] == given[1])
      fail(std::string(kind.name) + " needs exactly one of fan_in= or fan_out= (the fan is " +
           "stated, never guessed from the shape)");
  }

  void check(const InitSpec& s) const {
    switch (s.kind) {
      case InitKind::Uniform:
        if (!(s.low < s.high)) fail("low must be less than high");
        break;
      case InitKind::Normal:
      case InitKind::TruncatedNormal:
        if (!(s.stddev > 0)) fail("std must be positive");
        break;
      case InitKind::KaimingUniform:
      case InitKind::KaimingNormal:
      case InitKind::XavierUniform:
      case InitKind::XavierNormal:
        if (s.fan_in < 0 || s.fan_out < 0 || (s.fan_in == 0 && s.fan_out == 0) ||
            (is_xavier(s.kind) && (s.fan_in == 0 || s.fan_out == 0)))
          fail("fans must be positive");
        if (!(s.gain > 0)) fail("gain must be positive");
        break;
      case InitKind::Zeros:
      case InitKind::Ones:
      case InitKind::Constant:
        break;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

template <typename T>
void fill(Tensor& t, const InitSpec& spec, Rng& rng) {
  T* p = t.data<T>();
  const int64_t n = t.numel();
  const double scale = spec.scale();
  switch (spec.kind) {
    case InitKind::Uniform:
      for (int64_t i = 0; i < n; ++i) p[i] = T(rng.uniform(spec.low, spec.high));
      break;
    case InitKind::KaimingUniform:
    case InitKind::XavierUniform:
      for (int64_t i = 0; i < n; ++i) p[i] = T(rng.uniform(-scale, scale));
      break;
    case InitKind::Normal:
      for (int64_t i = 0; i < n; ++i) p[i] = T(spec.mean + spec.stddev * rng.normal());
      break;
    case InitKind::TruncatedNormal:
      for (int64_t i = 0; i < n; ++i) {
        double z = rng.normal();
        while (std::abs(z) > 2.0) z = rng.normal();
        p[i] = T(spec.mean + spec.stddev * z);
      }
      break;
    case InitKind::KaimingNormal:
    case InitKind::XavierNormal:
      for (int64_t i = 0; i < n; ++i) p[i] = T(scale * rng.normal());
      break;
    case InitKind::Zeros:
    case InitKind::Ones:
    case InitKind::Constant:
      for (int64_t i = 0; i < n; ++i) p[i] = T(scale);
      break;
  }
}

}  // namespace

InitSpec InitSpec::parse(std::string_view text) {
  return SpecParser(text).parse();
}

double InitSpec::scale() const {
  const double fan = fan_in > 0 ? fan_in : fan_out;
  switch (kind) {
    case InitKind::Uniform:
      return std::max(std::abs(low), std::abs(high));  // the largest magnitude
    case InitKind::Normal:
    case InitKind::TruncatedNormal:
      return stddev;
    case InitKind::KaimingUniform:
      return gain * std::sqrt(3.0 / fan);
    case InitKind::KaimingNormal:
      return gain / std::sqrt(fan);
    case InitKind::XavierUniform:
      return gain * std::sqrt(6.0 / (fan_in + fan_out));
    case InitKind::XavierNormal:
      return gain * std::sqrt(2.0 / (fan_in + fan_out));
    case InitKind::Zeros:
      return 0;
    case InitKind::Ones:
      return 1;
    case InitKind::Constant:
      return value;
  }
  return 0;
}

std::string InitSpec::to_string() const {
  const KindInfo& k = info(kind);
  std::string s = k.name;
  if (k.args.empty()) return s;
  std::vector<std::string> parts;
  for (const ArgInfo& a : k.args) {
    const double v = *field(*this, a.name);
    if (a.default_value && v == *a.default_value && !a.positional)
      continue;  // default or unused fan
    parts.push_back(a.positional ? number_text(v) : std::string(a.name) + "=" + number_text(v));
  }
  s += "(";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ")";
}

std::string InitSpec::derived() const {
  switch (kind) {
    case InitKind::Uniform:
      return "in [" + three_digits(low) + ", " + three_digits(high) + "]";
    case InitKind::KaimingUniform:
    case InitKind::XavierUniform:
      return "bound " + three_digits(scale());
    case InitKind::Normal:
    case InitKind::KaimingNormal:
    case InitKind::XavierNormal:
      return "std " + three_digits(scale());
    case InitKind::TruncatedNormal:
      return "std " + three_digits(stddev) + ", within [" + three_digits(mean - 2 * stddev) + ", " +
             three_digits(mean + 2 * stddev) + "]";
    case InitKind::Zeros:
    case InitKind::Ones:
    case InitKind::Constant:
      return "= " + three_digits(scale());
  }
  return "";
}

void initialize(Tensor& t, const InitSpec& spec, uint64_t seed, std::string_view name) {
  Rng rng(hash_key(seed, name));
  if (t.type() == ElemType::F32)
    fill<float>(t, spec, rng);
  else if (t.type() == ElemType::F64)
    fill<double>(t, spec, rng);
  else
    throw BindError("cannot initialise '" + std::string(name) + "': it is " + t.describe() +
                    ", not a float tensor");
}

std::string describe_init(std::string_view name, const std::vector<int64_t>& shape,
                          const InitSpec& spec) {
  std::ostringstream os;
  os << name << " [";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << "] " << spec.to_string() << " -> " << spec.derived();
  return os.str();
}

void fill_dropout_mask(Tensor& mask, double p, uint64_t key, int64_t first_row) {
  Rng rng(key);
  const int64_t skip = first_row > 0 ? first_row * (mask.numel() / mask.shape().at(0)) : 0;
  for (int64_t i = 0; i < skip; ++i) rng.uniform();
  const float keep = float(1.0 / (1.0 - p));
  float* m = mask.data<float>();
  for (int64_t i = 0; i < mask.numel(); ++i) m[i] = rng.uniform() < p ? 0.0f : keep;
}

uint64_t dropout_key(uint64_t seed, int64_t epoch, int64_t batch_index) {
  return hash_key(hash_key(hash_key(seed, "dropout"), uint64_t(epoch)), uint64_t(batch_index));
}

}  // namespace tenet::train
