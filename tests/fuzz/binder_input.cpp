// The binder fuzz target's work on one input (binder_input.h).
#include "tests/fuzz/binder_input.h"
#include "driver/driver.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "codegen/cpp.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "lower/bounds_check.h"
#include "passes/pipeline.h"
#include "support/checked.h"
#include "support/diagnostics.h"
#include "support/error.h"

namespace tenet::fuzz {

namespace {

/// What runs cheaply enough to interpret many times a second.
constexpr int64_t kMaxBytes = int64_t(1) << 20;   // per tensor
constexpr int64_t kMaxPoints = int64_t(1) << 16;  // per statement, loops included

struct Bindings {
  ir::SizeBindings sizes;
  std::map<size_t, std::vector<int64_t>> shapes;  // by input position
};

/// Any decimal integer, saturated to 64 bits (so both ends are reachable).
int64_t parse_int(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() ? 0 : int64_t(v);
}

Bindings parse_bindings(const std::string& text) {
  Bindings b;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > 1 && line[0] == '#') {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const int64_t input = parse_int(line.substr(1, colon - 1));
      if (input < 0 || input > 64) continue;
      std::istringstream dims(line.substr(colon + 1));
      std::vector<int64_t> shape;
      for (std::string d; dims >> d && shape.size() < 8;) shape.push_back(parse_int(d));
      b.shapes[size_t(input)] = shape;
    } else if (const size_t eq = line.find('='); eq != std::string::npos && eq > 0) {
      b.sizes[line.substr(0, eq)] = parse_int(line.substr(eq + 1));
    }
  }
  return b;
}

/// Bytes of a tensor of this type and shape, or nullopt when it cannot exist.
std::optional<int64_t> bytes_of(ElemType type, const std::vector<int64_t>& shape) {
  try {
    return check_tensor_bytes("fuzz", type, shape);
  } catch (const BindError&) {
    return std::nullopt;
  }
}

/// Points a block's statements visit, saturated at kMaxPoints + 1.
int64_t points(const std::vector<ir::Stmt>& body, const ir::SizeBindings& sizes) {
  int64_t total = 0;
  auto add = [&](int64_t n) { total = std::min(kMaxPoints + 1, total + n); };
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      const int64_t inner = points(s.loop->body, sizes);
      add(checked_mul(inner, s.loop->trip).value_or(kMaxPoints + 1));
      continue;
    }
    int64_t n = 1;
    for (const auto* dims : {&s.compute.out, &s.compute.reduce})
      for (const ir::Dim& d : *dims) {
        const auto extent = checked_sub(d.hi.eval(sizes), d.lo.eval(sizes));
        n = extent ? checked_mul(n, std::max<int64_t>(0, *extent)).value_or(kMaxPoints + 1)
                   : kMaxPoints + 1;
        n = std::min(n, kMaxPoints + 1);
      }
    add(n);
  }
  return total;
}

/// True when every value of the function is small under `sizes`.
bool small(const ir::Function& fn, const ir::SizeBindings& sizes) {
  bool ok = true;
  auto value = [&](const ir::Value& v) {
    const auto bytes = bytes_of(v.type, ir::concrete_shape(v, sizes));
    ok = ok && bytes && *bytes <= kMaxBytes;
  };
  std::function<void(const std::vector<ir::Stmt>&)> block = [&](const auto& body) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) {
        block(s.loop->body);
        for (const auto& c : s.loop->carried) value(*c.result);
      } else {
        value(*s.compute.result);
      }
    }
  };
  for (const auto& v : fn.inputs) value(*v);
  block(fn.body);
  return ok && points(fn.body, sizes) <= kMaxPoints;
}

void bind_function(const ir::Function& fn, const Bindings& b) {
  // The sizes alone, as `tenet run --sizes` and an Executable check them.
  try {
    ir::check_sizes(fn, b.sizes);
    lower::check_reads_in_bounds(fn, b.sizes);
  } catch (const BindError&) {
  }
  // Inputs of the given (or declared) shapes, if small enough to make.
  ir::SizeBindings given;
  for (const auto& [name, value] : b.sizes)
    for (const auto& p : fn.size_params)
      if (p == name) given[name] = value;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const ir::Value& v = *fn.inputs[i];
    std::vector<int64_t> shape;
    if (auto it = b.shapes.find(i); it != b.shapes.end()) {
      shape = it->second;
    } else {
      try {
        shape = ir::concrete_shape(v, given);
      } catch (const BindError&) {
        return;  // a size it needs is not given
      }
    }
    const auto bytes = bytes_of(v.type, shape);
    if (!bytes || *bytes > kMaxBytes) {
      // Tensor must refuse the impossible ones with a user error.
      if (!bytes) {
        try {
          Tensor t(v.type, shape);
        } catch (const BindError&) {
          return;
        }
        std::abort();  // an impossible tensor was made
      }
      return;
    }
    inputs.push_back(random_tensor(v.type, shape, i, -2.0, 2.0, 4));
  }
  try {
    const ir::SizeBindings sizes = ir::bind_sizes(fn, inputs, given);
    lower::check_reads_in_bounds(fn, sizes);
    if (small(fn, sizes)) ir::interpret(fn, inputs, given);
  } catch (const BindError&) {
  }
}

}  // namespace

void run_binder_input(const std::string& input) {
  const size_t split = input.find("\n---\n");
  const std::string program = input.substr(0, split);
  const Bindings b =
      parse_bindings(split == std::string::npos ? std::string() : input.substr(split + 5));
  ir::Module m;
  try {
    m = lang::compile_source(SourceFile("fuzz.tn", program));
  } catch (const CompileError&) {
    return;
  } catch (const BindError&) {
    return;
  }
  for (const ir::Function& fn : m.functions) bind_function(fn, b);
  try {
    driver::optimise(m);
    for (const ir::Function& fn : m.functions) bind_function(fn, b);
    if (!m.functions.empty()) driver::emit_cpp(m);
  } catch (const CompileError&) {
  } catch (const BindError&) {
  }
}

}  // namespace tenet::fuzz
