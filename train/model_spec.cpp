// The trainer's directives in a model file (model_spec.h): scanning the
// comment lines, then checking them against the checked functions.
#include "train/model_spec.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>

namespace tenet::train {

namespace {

struct Word {
  std::string text;
  Span span;
};

/// One `# @name ...` line: its words (split at blanks) and, for @param, the
/// text after the first word (an initialiser may contain blanks).
struct Directive {
  Word name;  // without the '@'
  std::vector<Word> words;
  Word rest_after_first;
};

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/// The words of text[begin, end) split at blanks.
std::vector<Word> split_words(const std::string& text, size_t begin, size_t end) {
  std::vector<Word> words;
  size_t i = begin;
  while (i < end) {
    while (i < end && blank(text[i])) ++i;
    size_t start = i;
    while (i < end && !blank(text[i])) ++i;
    if (i > start)
      words.push_back({text.substr(start, i - start), Span::of(uint32_t(start), uint32_t(i))});
  }
  return words;
}

Word trimmed(const std::string& text, size_t begin, size_t end) {
  while (begin < end && blank(text[begin])) ++begin;
  while (end > begin && blank(text[end - 1])) --end;
  return {text.substr(begin, end - begin), Span::of(uint32_t(begin), uint32_t(end))};
}

/// The directive on text[begin, end) (one line), if it is one: `#`, blanks,
/// `@name`, then words up to the end of the line or a further `#`.
std::optional<Directive> directive_on_line(const std::string& text, size_t begin, size_t end) {
  size_t i = begin;
  while (i < end && blank(text[i])) ++i;
  if (i == end || text[i] != '#') return std::nullopt;
  ++i;
  while (i < end && blank(text[i])) ++i;
  if (i == end || text[i] != '@') return std::nullopt;
  const size_t at = i++;
  while (i < end && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
  size_t body_end = text.find('#', i);
  if (body_end == std::string::npos || body_end > end) body_end = end;
  Directive d;
  d.name = {text.substr(at + 1, i - at - 1), Span::of(uint32_t(at), uint32_t(i))};
  d.words = split_words(text, i, body_end);
  if (!d.words.empty()) d.rest_after_first = trimmed(text, d.words[0].span.end, body_end);
  return d;
}

std::vector<Directive> scan(const SourceFile& file) {
  const std::string& text = file.text();
  std::vector<Directive> out;
  for (size_t line = 0; line < text.size();) {
    size_t end = std::min(text.find('\n', line), text.size());
    if (auto d = directive_on_line(text, line, end)) out.push_back(std::move(*d));
    line = end + 1;
  }
  return out;
}

/// `key=value` words after the positional ones, keyed by key.
struct KeyValues {
  std::map<std::string, Word> values;
  std::map<std::string, Span> key_spans;
};

KeyValues key_values(const SourceFile& file, const Directive& d, size_t first,
                     const std::set<std::string>& allowed) {
  KeyValues kv;
  for (size_t i = first; i < d.words.size(); ++i) {
    const Word& w = d.words[i];
    size_t eq = w.text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.text.size())
      fail_at(file, w.span, "expected KEY=VALUE in @" + d.name.text + ", found '" + w.text + "'");
    std::string key = w.text.substr(0, eq);
    Span key_span = Span::of(w.span.begin, w.span.begin + uint32_t(eq));
    if (!allowed.count(key)) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      fail_at(file, key_span, "unknown key '" + key + "' in @" + d.name.text,
              {{Span{}, "@" + d.name.text + " takes " + names}});
    }
    if (kv.values.count(key))
      fail_at(file, key_span, "'" + key + "' is given twice",
              {{kv.key_spans.at(key), "first given here"}});
    kv.values[key] = {w.text.substr(eq + 1), Span::of(w.span.begin + uint32_t(eq) + 1, w.span.end)};
    kv.key_spans[key] = key_span;
  }
  return kv;
}

bool parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

/// The output of `fn` named `name`, or an error at `where`.
const ir::ValuePtr& require_output(const SourceFile& file, const ir::Function& fn,
                                   const Word& where, const std::string& name) {
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (fn.output_names[i] == name) return fn.outputs[i];
  std::string names;
  for (const auto& n : fn.output_names) names += (names.empty() ? "" : ", ") + n;
  fail_at(file, where.span, "'" + fn.name + "' has no output '" + name + "'",
          {{fn.span, "its outputs are " + names}});
}

const ir::ValuePtr* find_input(const ir::Function& fn, const std::string& name) {
  for (const auto& in : fn.inputs)
    if (in->name == name) return &in;
  return nullptr;
}

std::string shape_text(const ir::Value& v) {
  std::string s = std::string(type_name(v.type)) + "[";
  for (size_t i = 0; i < v.shape.size(); ++i) s += (i ? ", " : "") + v.shape[i].str();
  return s + "]";
}

/// Builds the spec from the directives, then checks it against the module.
class SpecBuilder {
 public:
  SpecBuilder(const SourceFile& file, const ir::Module& module) : file_(file), module_(module) {}

  ModelSpec build() {
    for (const Directive& d : scan(file_)) add(d);
    if (!train_) fail_at(file_, Span{}, "no '# @train FN loss=OUTPUT' line: " + kHowTo);
    if (!eval_) fail_at(file_, Span{}, "no '# @eval FN scores=OUTPUT' line: " + kHowTo);
    if (!data_) fail_at(file_, Span{}, "no '# @data image=INPUT label=INPUT' line: " + kHowTo);
    check_entries();
    check_train_inputs();
    check_eval_inputs();
    return spec_;
  }

 private:
  inline static const std::string kHowTo =
      "a model for `tenet train` declares its entry functions, data inputs, dropout masks and "
      "parameters in '# @...' comment lines (docs/training.md)";

  struct Seen {
    Span span;
  };

  void once(std::optional<Seen>& seen, const Directive& d) {
    if (seen)
      fail_at(file_, d.name.span, "a second @" + d.name.text + " line",
              {{seen->span, "the first is here"}});
    seen = Seen{d.name.span};
  }

  void add(const Directive& d) {
    const std::string& n = d.name.text;
    if (n == "train" || n == "eval")
      add_entry(d, n == "train");
    else if (n == "data")
      add_data(d);
    else if (n == "dropout")
      add_dropout(d);
    else if (n == "param")
      add_param(d);
    else if (n == "defaults")
      add_defaults(d);
    else
      fail_at(file_, d.name.span, "unknown directive '@" + n + "'",
              {{Span{},
                "directives are @train, @eval, @data, @dropout, @param and @defaults "
                "(docs/training.md)"}});
  }

  // @train FN loss=OUT [scores=OUT], @eval FN scores=OUT [loss=OUT]
  void add_entry(const Directive& d, bool is_train) {
    const std::string& n = d.name.text;
    once(is_train ? train_ : eval_, d);
    if (d.words.empty()) fail_at(file_, d.name.span, "@" + n + " needs the name of a function");
    KeyValues kv = key_values(file_, d, 1, {"loss", "scores"});
    EntrySpec& e = is_train ? spec_.train : spec_.eval;
    e.function = d.words[0].text;
    (is_train ? train_word_ : eval_word_) = d.words[0];
    std::string required = is_train ? "loss" : "scores";
    if (!kv.values.count(required))
      fail_at(file_, d.name.span, "@" + n + " needs " + required + "=OUTPUT");
    for (const auto& [key, word] : kv.values) {
      (key == "loss" ? e.loss : e.scores) = word.text;
      (is_train ? train_outputs_ : eval_outputs_)[key] = word;
    }
  }

  // @data image=IN label=IN
  void add_data(const Directive& d) {
    once(data_, d);
    KeyValues kv = key_values(file_, d, 0, {"image", "label"});
    for (const char* key : {"image", "label"})
      if (!kv.values.count(key))
        fail_at(file_, d.name.span, std::string("@data needs ") + key + "=INPUT");
    spec_.image = kv.values.at("image").text;
    spec_.label = kv.values.at("label").text;
    role(spec_.image, kv.values.at("image").span);
    role(spec_.label, kv.values.at("label").span);
  }

  // @dropout IN p=P
  void add_dropout(const Directive& d) {
    if (d.words.empty()) fail_at(file_, d.name.span, "@dropout needs an input name and p=P");
    KeyValues kv = key_values(file_, d, 1, {"p"});
    if (!kv.values.count("p")) fail_at(file_, d.name.span, "@dropout needs p=P");
    const Word& pw = kv.values.at("p");
    double p = 0;
    if (!parse_number(pw.text, p) || p < 0 || p >= 1)
      fail_at(file_, pw.span, "the dropout probability must be in [0, 1), not '" + pw.text + "'");
    role(d.words[0].text, d.words[0].span);
    spec_.dropouts.push_back({d.words[0].text, p});
  }

  // @param IN INITIALISER
  void add_param(const Directive& d) {
    if (d.words.size() < 2)
      fail_at(file_, d.name.span,
              "@param needs an input name and an initialiser, e.g. "
              "'# @param conv1_w kaiming_uniform(fan_in=81)'");
    role(d.words[0].text, d.words[0].span);
    ParamSpec p;
    p.input = d.words[0].text;
    try {
      p.init = InitSpec::parse(d.rest_after_first.text);
    } catch (const InitError& e) {
      fail_at(file_, d.rest_after_first.span, e.what());
    }
    params_.push_back({p, d.words[0]});
  }

  // @defaults KEY=VALUE ...
  void add_defaults(const Directive& d) {
    std::set<std::string> keys;
    for (const TrainingOption& o : training_options()) keys.insert(o.name);
    KeyValues kv = key_values(file_, d, 0, keys);
    for (const auto& [key, word] : kv.values) {
      if (spec_.defaults.count(key))
        fail_at(file_, kv.key_spans.at(key), "default '" + key + "' is given twice");
      const TrainingOption& option = *find_training_option(key);
      if (!option.accepts(word.text))
        fail_at(file_, word.span, bad_value_message(option, "'" + key + "'", word.text),
                {{Span{}, key + ": " + option.help + " (tenet train --help lists the options)"}});
      spec_.defaults[key] = word.text;
    }
  }

  /// Records that an input has a role; an input has at most one.
  void role(const std::string& input, Span span) {
    auto [it, fresh] = roles_.emplace(input, span);
    if (!fresh)
      fail_at(file_, span, "input '" + input + "' already has a role",
              {{it->second, "given here"}});
  }

  const ir::Function& function(const Word& name) {
    if (const ir::Function* f = module_.find(name.text)) return *f;
    std::string names;
    for (const auto& f : module_.functions) names += (names.empty() ? "" : ", ") + f.name;
    fail_at(file_, name.span, "no function '" + name.text + "' in this file",
            {{Span{}, "functions: " + names}});
  }

  void check_entries() {
    train_fn_ = &function(train_word_);
    eval_fn_ = &function(eval_word_);
    for (bool is_train : {true, false}) {
      const ir::Function& fn = is_train ? *train_fn_ : *eval_fn_;
      for (const auto& [key, word] : is_train ? train_outputs_ : eval_outputs_) {
        const ir::ValuePtr& out = require_output(file_, fn, word, word.text);
        if (key == "loss" && (out->rank() != 0 || !is_float(out->type)))
          fail_at(
              file_, word.span,
              "the loss '" + word.text + "' must be a float scalar, but it is " + shape_text(*out));
        if (key == "scores" &&
            (out->rank() != 2 || out->type != ElemType::F32 || out->shape[1] != ir::SizeExpr(10)))
          fail_at(file_, word.span,
                  "the scores '" + word.text +
                      "' must be float32[B, 10] (one per class), but they are " + shape_text(*out));
      }
    }
  }

  const ir::ValuePtr& require_input(const ir::Function& fn, const std::string& name, Span where) {
    if (const ir::ValuePtr* v = find_input(fn, name)) return *v;
    fail_at(file_, where, "'" + fn.name + "' has no input '" + name + "'",
            {{fn.span, "defined here"}});
  }

  void check_data_inputs(const ir::Function& fn, bool label_required) {
    const ir::ValuePtr& image = require_input(fn, spec_.image, roles_.at(spec_.image));
    bool image_ok = image->type == ElemType::F32 && image->rank() == 4 &&
                    image->shape[0].as_symbol() && image->shape[1] == ir::SizeExpr(1) &&
                    image->shape[2] == ir::SizeExpr(28) && image->shape[3] == ir::SizeExpr(28);
    if (!image_ok)
      fail_at(file_, image->span,
              "the image input '" + spec_.image + "' of '" + fn.name +
                  "' must be float32[B, 1, 28, 28] (B: the batch), not " + shape_text(*image));
    if (spec_.batch_size.empty()) spec_.batch_size = image->shape[0].str();
    if (image->shape[0].str() != spec_.batch_size)
      fail_at(file_, image->span,
              "the batch size of '" + fn.name + "' is " + image->shape[0].str() + " but it is " +
                  spec_.batch_size + " in '" + train_fn_->name + "'");
    const ir::ValuePtr* label = find_input(fn, spec_.label);
    if (!label && label_required) require_input(fn, spec_.label, roles_.at(spec_.label));
    if (label && ((*label)->type != ElemType::I32 || (*label)->rank() != 1 ||
                  (*label)->shape[0].str() != spec_.batch_size))
      fail_at(file_, (*label)->span,
              "the label input '" + spec_.label + "' must be int32[" + spec_.batch_size +
                  "], not " + shape_text(**label));
  }

  void check_train_inputs() {
    const ir::Function& fn = *train_fn_;
    check_data_inputs(fn, true);
    for (const DropoutSpec& d : spec_.dropouts) {
      const ir::ValuePtr& in = require_input(fn, d.input, roles_.at(d.input));
      if (in->type != ElemType::F32 || in->rank() == 0 || in->shape[0].str() != spec_.batch_size)
        fail_at(file_, in->span,
                "the dropout mask '" + d.input + "' must be float32 with the batch (" +
                    spec_.batch_size + ") as its first dimension, not " + shape_text(*in));
    }
    for (auto& [p, word] : params_) {
      const ir::ValuePtr& in = require_input(fn, p.input, word.span);
      if (in->type != ElemType::F32)
        fail_at(file_, in->span,
                "parameter '" + p.input + "' must be float32, not " + shape_text(*in));
      for (const ir::SizeExpr& d : in->shape) {
        if (!d.is_constant())
          fail_at(file_, in->span,
                  "parameter '" + p.input + "' has the shape " + shape_text(*in) +
                      ": parameters need constant dimensions");
        p.shape.push_back(*d.constant());
      }
    }
    // Every input has a role, and parameters come in the function's order.
    for (const auto& in : fn.inputs) {
      if (!roles_.count(in->name))
        fail_at(
            file_, in->span,
            "input '" + in->name + "' of '" + fn.name +
                "' has no role: declare it with '# @param " + in->name +
                " INITIALISER' (or @data, @dropout)",
            {{Span{},
              "initialisers: uniform(LOW, HIGH), normal(MEAN, STD), truncated_normal(MEAN, STD), "
              "kaiming_uniform(fan_in=F), kaiming_normal(fan_in=F), xavier_uniform(fan_in=A, "
              "fan_out=B), xavier_normal(...), zeros, ones, constant(V)"}});
      for (const auto& [p, word] : params_)
        if (p.input == in->name) spec_.params.push_back(p);
    }
  }

  void check_eval_inputs() {
    const ir::Function& fn = *eval_fn_;
    check_data_inputs(fn, false);
    for (const auto& in : fn.inputs) {
      if (in->name == spec_.image || in->name == spec_.label) continue;
      const ir::ValuePtr* same = find_input(*train_fn_, in->name);
      if (!roles_.count(in->name) || !same)
        fail_at(file_, in->span,
                "input '" + in->name + "' of '" + fn.name +
                    "' is not an input of the training function '" + train_fn_->name + "'",
                {{Span{},
                  "the evaluation function takes the data, dropout masks and parameters of the "
                  "training function"}});
      if (shape_text(**same) != shape_text(*in))
        fail_at(file_, in->span,
                "input '" + in->name + "' is " + shape_text(*in) + " in '" + fn.name + "' but " +
                    shape_text(**same) + " in '" + train_fn_->name + "'");
    }
  }

  const SourceFile& file_;
  const ir::Module& module_;
  ModelSpec spec_;
  std::optional<Seen> train_, eval_, data_;
  Word train_word_, eval_word_;
  std::map<std::string, Word> train_outputs_, eval_outputs_;
  std::vector<std::pair<ParamSpec, Word>> params_;
  std::map<std::string, Span> roles_;
  const ir::Function* train_fn_ = nullptr;
  const ir::Function* eval_fn_ = nullptr;
};

}  // namespace

const DropoutSpec* ModelSpec::find_dropout(const std::string& input) const {
  for (const auto& d : dropouts)
    if (d.input == input) return &d;
  return nullptr;
}

const ParamSpec* ModelSpec::find_param(const std::string& input) const {
  for (const auto& p : params)
    if (p.input == input) return &p;
  return nullptr;
}

ModelSpec parse_model_spec(const SourceFile& file, const ir::Module& module) {
  return SpecBuilder(file, module).build();
}

}  // namespace tenet::train
