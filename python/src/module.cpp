// The extension module tenet._tenet: the compiler's C++ API as the Python
// package (python/tenet/) uses it. User errors become Python exceptions:
// CompileError (the rendered diagnostics), BindError (a ValueError naming the
// input, expected and actual shape); a broken compiler invariant is
// InternalError (a RuntimeError). Long-running calls (the C++ compiler, the
// generated code, the interpreter) release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ad/split.h"
#include "cuda/nvrtc.h"
#include "ir/builtins.h"
#include "python/src/arrays.h"
#include "python/src/benchmark.h"
#include "python/src/extension.h"
#include "python/src/kernel.h"
#include "python/src/program.h"
#include "python/src/training.h"
#include "support/child_processes.h"
#include "support/error.h"

namespace py = pybind11;
using namespace tenet;
using namespace tenet::python;

namespace {

ad::VjpHalf vjp_half(const std::string& name) {
  for (ad::VjpHalf h : {ad::VjpHalf::Both, ad::VjpHalf::Forward, ad::VjpHalf::Backward})
    if (name == ad::half_name(h)) return h;
  throw UsageError("half='" + name + "': expected 'both', 'forward' or 'backward'");
}

std::string input_name(const FunctionInfo& info, size_t i) {
  return i < info.inputs.size() ? info.inputs[i].name : "#" + std::to_string(i);
}

std::vector<RawInput> raw_inputs(const std::vector<py::array>& arrays, const FunctionInfo& info) {
  std::vector<RawInput> raw;
  for (size_t i = 0; i < arrays.size(); ++i)
    raw.push_back(raw_input(arrays[i], input_name(info, i)));
  return raw;
}

std::vector<Tensor> to_tensors(const std::vector<py::array>& arrays, const FunctionInfo& info) {
  std::vector<Tensor> tensors;
  for (const RawInput& r : raw_inputs(arrays, info)) tensors.push_back(copy_to_tensor(r));
  return tensors;
}

std::vector<py::array> to_arrays(const std::vector<Tensor>& tensors) {
  std::vector<py::array> arrays;
  for (const Tensor& t : tensors) arrays.push_back(to_numpy(t));
  return arrays;
}

/// Input types (Tenet's names) and shapes as TensorShapes.
std::vector<TensorShape> tensor_shapes(const std::vector<std::string>& types,
                                       const std::vector<std::vector<int64_t>>& shapes) {
  if (types.size() != shapes.size()) throw py::value_error("one type per shape");
  std::vector<TensorShape> out;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::optional<ElemType> t = parse_type_name(types[i]);
    if (!t) throw py::type_error("no element type '" + types[i] + "'");
    out.push_back({*t, shapes[i]});
  }
  return out;
}

// The arrays stay alive (the caller's list holds them) while the GIL is released.
std::vector<py::array> run_kernel(Kernel& k, const std::vector<py::array>& inputs,
                                  const ir::SizeBindings& sizes, int64_t pack_from) {
  const std::vector<RawInput> raw = raw_inputs(inputs, k.info());
  std::vector<Tensor> out;
  {
    py::gil_scoped_release release;
    out = k.run(raw, sizes, pack_from < 0 ? SIZE_MAX : size_t(pack_from));
  }
  return to_arrays(out);
}

// The inputs beside the packed ones are named as the function's (slots skipped).
std::vector<py::array> run_unpacking(Kernel& k, const std::vector<py::array>& others,
                                     const py::array& packed, const std::vector<size_t>& slots,
                                     const ir::SizeBindings& sizes) {
  std::vector<RawInput> raw;
  for (size_t i = 0, k_slot = 0, o = 0; o < others.size(); ++i) {
    if (k_slot < slots.size() && slots[k_slot] == i) {
      ++k_slot;
      continue;
    }
    raw.push_back(raw_input(others[o++], input_name(k.info(), i)));
  }
  const RawInput buffer = raw_input(packed, "saved values");
  std::vector<Tensor> out;
  {
    py::gil_scoped_release release;
    out = k.run_unpacking(raw, buffer, slots, sizes);
  }
  return to_arrays(out);
}

std::unique_ptr<Kernel> compile(const CheckedProgram& p, const Variant& v,
                                const std::string& cache_dir, const std::string& cxx, bool openmp,
                                bool verbose, bool index_checks, const std::string& target) {
  jit::JitOptions options;
  options.cache_dir = cache_dir;
  options.cxx = cxx;
  options.cpp.openmp = openmp;
  options.cpp.index_checks = index_checks;
  options.verbose = verbose;
  py::gil_scoped_release release;
  return p.compile(v, options, target);
}

std::vector<py::array> interpret(const CheckedProgram& p, const Variant& v,
                                 const std::vector<py::array>& inputs,
                                 const ir::SizeBindings& sizes) {
  std::vector<Tensor> in = to_tensors(inputs, p.info(v));
  std::vector<Tensor> out;
  {
    py::gil_scoped_release release;
    out = p.interpret(v, in, sizes);
  }
  return to_arrays(out);
}

ad::GradcheckReport gradcheck(const CheckedProgram& p, const std::string& entry,
                              const ad::GradRequest& request, const ir::SizeBindings& sizes,
                              const std::vector<py::array>& inputs, uint64_t seed, double step,
                              double tolerance, int64_t max_entries) {
  ad::GradcheckOptions options;
  options.request = request;
  options.sizes = sizes;
  options.seed = seed;
  options.step = step;
  options.tolerance = tolerance;
  options.max_entries = max_entries;
  options.inputs = to_tensors(inputs, p.info(Variant{entry, false, std::nullopt}));
  py::gil_scoped_release release;
  return p.gradcheck(entry, options);
}

void bind_errors(py::module_& m) {
  py::register_exception<CompileError>(m, "CompileError", PyExc_Exception);
  py::register_exception<BindError>(m, "BindError", PyExc_ValueError);
  py::register_exception<InternalError>(m, "InternalError", PyExc_RuntimeError);
}

/// A size expression as Python evaluates it (tenet/sizes.py), from the
/// compiler's normal form rather than its text: an int, a size parameter's
/// name, or a tuple ("+", terms...), ("*", a, b), ("//", a, divisor),
/// ("min", a, b), ("max", a, b).
py::object size_tree(const ir::SizeExpr& s) {
  using Atom = ir::SizeExpr::Atom;
  std::vector<py::object> terms;
  for (const auto& [atom, coef] : s.atoms()) {
    py::object a;
    switch (atom.kind) {
      case Atom::Sym:
        a = py::str(atom.key);
        break;
      case Atom::FloorDiv:
        a = py::make_tuple("//", size_tree(atom.args.at(0)), atom.divisor);
        break;
      case Atom::Min:
        a = py::make_tuple("min", size_tree(atom.args.at(0)), size_tree(atom.args.at(1)));
        break;
      case Atom::Max:
        a = py::make_tuple("max", size_tree(atom.args.at(0)), size_tree(atom.args.at(1)));
        break;
      case Atom::Mul:
        a = py::make_tuple("*", size_tree(atom.args.at(0)), size_tree(atom.args.at(1)));
        break;
    }
    terms.push_back(coef == 1 ? a : py::make_tuple("*", coef, a));
  }
  if (s.constant_term() != 0 || terms.empty()) terms.push_back(py::int_(s.constant_term()));
  if (terms.size() == 1) return terms[0];
  py::tuple sum(terms.size() + 1);
  sum[0] = py::str("+");
  for (size_t i = 0; i < terms.size(); ++i) sum[i + 1] = terms[i];
  return sum;
}

void bind_descriptions(py::module_& m) {
  py::class_<TensorInfo>(m, "TensorInfo")
      .def_readonly("name", &TensorInfo::name)
      .def_readonly("type", &TensorInfo::type)
      .def_readonly("shape", &TensorInfo::shape)
      .def_property_readonly(
          "size_trees",
          [](const TensorInfo& t) {
            py::list out;
            for (const ir::SizeExpr& s : t.sizes) out.append(size_tree(s));
            return out;
          },
          "each dimension's size expression as a tree (tenet/sizes.py)")
      .def_readonly("updates", &TensorInfo::updates)
      .def_readonly("gradient_of", &TensorInfo::gradient_of);
  py::class_<FunctionInfo>(m, "FunctionInfo")
      .def_readonly("name", &FunctionInfo::name)
      .def_readonly("size_params", &FunctionInfo::size_params)
      .def_readonly("inputs", &FunctionInfo::inputs)
      .def_readonly("outputs", &FunctionInfo::outputs);
  py::class_<ad::GradRequest>(m, "GradRequest")
      .def(py::init([](std::vector<std::string> wrt, std::string output, bool vjp,
                       std::vector<std::string> outputs, const std::string& half) {
             return ad::GradRequest{std::move(wrt), std::move(output), vjp, std::move(outputs),
                                    vjp_half(half)};
           }),
           py::arg("wrt") = std::vector<std::string>{}, py::arg("output") = "",
           py::arg("vjp") = false, py::arg("outputs") = std::vector<std::string>{},
           py::arg("half") = "both")
      .def_readonly("wrt", &ad::GradRequest::wrt)
      .def_readonly("output", &ad::GradRequest::output)
      .def_readonly("vjp", &ad::GradRequest::vjp)
      .def_readonly("outputs", &ad::GradRequest::outputs)
      .def_property_readonly(
          "half", [](const ad::GradRequest& r) { return std::string(ad::half_name(r.half)); });
  py::class_<Variant>(m, "Variant")
      .def(py::init([](std::string entry, bool float64, std::optional<ad::GradRequest> grad,
                       ir::SizeBindings static_sizes) {
             return Variant{std::move(entry), float64, std::move(grad), std::move(static_sizes)};
           }),
           py::arg("entry"), py::arg("float64") = false, py::arg("grad") = std::nullopt,
           py::arg("static_sizes") = ir::SizeBindings{})
      .def_readonly("entry", &Variant::entry)
      .def_readonly("float64", &Variant::float64)
      .def_readonly("grad", &Variant::grad)
      .def_readonly("static_sizes", &Variant::static_sizes);
  py::class_<ad::InputCheck>(m, "InputCheck")
      .def_readonly("input", &ad::InputCheck::input)
      .def_readonly("checked", &ad::InputCheck::checked)
      .def_readonly("kinks", &ad::InputCheck::kinks)
      .def_readonly("max_abs", &ad::InputCheck::max_abs)
      .def_readonly("max_rel", &ad::InputCheck::max_rel)
      .def_readonly("problem", &ad::InputCheck::problem)
      .def_readonly("passed", &ad::InputCheck::pass);
  py::class_<ad::GradcheckReport>(m, "GradcheckReport")
      .def_readonly("inputs", &ad::GradcheckReport::inputs)
      .def_readonly("warnings", &ad::GradcheckReport::warnings)
      .def_readonly("errors", &ad::GradcheckReport::errors)
      .def_readonly("passed", &ad::GradcheckReport::pass)
      .def("table", &ad::format_report);
}

/// The language's vocabulary (ir/builtins.h) as data, for the importer's
/// names: {"builtins": [{"name", "arity", "operands"}], "keywords", "types"}.
py::dict vocabulary() {
  py::list builtins;
  for (const ir::Builtin& b : ir::builtins()) {
    py::dict d;
    d["name"] = std::string(b.name);
    d["arity"] = b.arity;
    d["operands"] = b.operands == ir::Operands::Floats    ? "floats"
                    : b.operands == ir::Operands::Numbers ? "numbers"
                                                          : "any";
    builtins.append(d);
  }
  py::list keywords, types;
  for (std::string_view w : ir::keywords()) keywords.append(std::string(w));
  for (std::string_view w : ir::type_names()) types.append(std::string(w));
  py::dict out;
  out["builtins"] = builtins;
  out["keywords"] = keywords;
  out["types"] = types;
  return out;
}

/// tenet._tenet.Kernel: a compiled function, on host arrays or device buffers.
void bind_kernel(py::module_& m) {
  py::class_<Kernel>(m, "Kernel")
      .def("run", &run_kernel, py::arg("inputs"), py::arg("sizes"), py::arg("pack_from") = -1,
           "runs on one array per input; pack_from >= 0: the outputs from there on in one "
           "uint8 array, returned last")
      .def("run_unpacking", &run_unpacking, py::arg("others"), py::arg("packed"), py::arg("slots"),
           py::arg("sizes"),
           "runs with the inputs at `slots` read from `packed` (a pack_from run's last "
           "array), `others` the rest")
      .def_property_readonly("runs_on_device",
                             [](const Kernel& k) { return k.compiled().runs_on_device(); })
      .def(
          "device_binding",
          [](Kernel& k, const std::vector<std::string>& types,
             const std::vector<std::vector<int64_t>>& shapes, const ir::SizeBindings& sizes) {
            const jit::DeviceBinding& b = k.device_binding(tensor_shapes(types, shapes), sizes);
            std::vector<std::string> out_types;
            std::vector<std::vector<int64_t>> out_shapes;
            for (const TensorShape& t : b.outputs) {
              out_types.emplace_back(type_name(t.type));
              out_shapes.push_back(t.shape);
            }
            return std::make_tuple(out_types, out_shapes, b.workspace_bytes);
          },
          py::arg("types"), py::arg("shapes"), py::arg("sizes"),
          "a GPU target's kernel bound to its inputs' types and shapes: (output types, "
          "output shapes, workspace bytes)")
      .def(
          "run_on_device",
          [](Kernel& k, const std::vector<std::string>& types,
             const std::vector<std::vector<int64_t>>& shapes, const ir::SizeBindings& sizes,
             const std::vector<uintptr_t>& inputs, const std::vector<uintptr_t>& outputs,
             uintptr_t workspace) {
            const std::vector<TensorShape> bound = tensor_shapes(types, shapes);
            std::vector<const void*> in;
            std::vector<void*> out;
            for (uintptr_t p : inputs) in.push_back(reinterpret_cast<const void*>(p));
            for (uintptr_t p : outputs) out.push_back(reinterpret_cast<void*>(p));
            py::gil_scoped_release release;
            k.run_on_device(bound, sizes, in, out, reinterpret_cast<void*>(workspace));
          },
          py::arg("types"), py::arg("shapes"), py::arg("sizes"), py::arg("inputs"),
          py::arg("outputs"), py::arg("workspace"),
          "runs on device buffers (data pointers) of the bound shapes; an output that "
          "updates an input is given the input's buffer")
      .def_property_readonly("info", &Kernel::info)
      .def_property_readonly("cache_hit", [](const Kernel& k) { return k.compiled().cache_hit(); })
      .def_property_readonly("library_path",
                             [](const Kernel& k) { return k.compiled().library_path(); })
      .def_property_readonly("cpp_path", [](const Kernel& k) { return k.compiled().source_path(); })
      .def(
          "time_calls_from_cpp",
          [](const Kernel& k, const std::vector<py::array>& inputs, const ir::SizeBindings& sizes,
             int calls, int rounds) {
            std::vector<Tensor> in = to_tensors(inputs, k.info());
            py::gil_scoped_release release;
            CallTimes t = time_calls_from_cpp(k, in, sizes, calls, rounds);
            return std::make_tuple(t.run, t.executable, t.raw);
          },
          py::arg("inputs"), py::arg("sizes"), py::arg("calls"), py::arg("rounds"),
          "CPU seconds per call from C++: (CompiledFunction::run, Executable::run, "
          "Executable::run_raw)");
}

/// The cuda target's NVRTC check of a variant (tests/python/test_cuda_targets.py).
void bind_cuda(py::module_& m) {
  m.def(
      "cuda_kernel_report",
      [](const CheckedProgram& p, const Variant& v, const std::string& arch) {
        std::string why;
        if (!cuda::nvrtc_available(&why)) throw std::runtime_error(why);
        const codegen::CppUnit unit = p.cuda_unit(v);
        py::gil_scoped_release release;
        const cuda::DeviceCode code = cuda::compile_kernels(unit.kernels, unit.kernels_name, arch);
        std::map<std::string, int64_t> report{{"kernels", int64_t(code.kernels.size())}};
        for (const cuda::KernelResources& k : code.kernels) {
          report["max_registers"] = std::max<int64_t>(report["max_registers"], k.registers);
          report["max_spill_bytes"] = std::max<int64_t>(report["max_spill_bytes"],
                                                        k.spill_store_bytes + k.spill_load_bytes);
          report["max_shared_bytes"] =
              std::max<int64_t>(report["max_shared_bytes"], k.shared_bytes);
        }
        return report;
      },
      py::arg("program"), py::arg("variant"), py::arg("arch"),
      "the variant's kernels printed by the cuda target and compiled by NVRTC for `arch`: "
      "their count and largest resources (RuntimeError without NVRTC; BindError with NVRTC's "
      "log when they do not compile)");
}

}  // namespace

PYBIND11_MODULE(_tenet, m) {
  m.doc() = "Tenet's compiler (C++), as the tenet package uses it";
  bind_errors(m);
  bind_descriptions(m);
  bind_training(m);
  bind_extension(m);
  m.def("vocabulary", &vocabulary,
        "the language's builtins, keywords and type names (ir/builtins.h)");
  // Ctrl-C during a JIT compile: Python's handler only sets a flag; this
  // check (run while the compiler runs) raises KeyboardInterrupt, which ends
  // the compiler's process group (support/child_processes.h).
  tenet::set_interrupt_check([] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  });

  bind_kernel(m);

  py::class_<CheckedProgram>(m, "CheckedProgram")
      .def(py::init<const std::string&, const std::string&>(), py::arg("source"),
           py::arg("filename"))
      .def("function_names", &CheckedProgram::function_names)
      .def(
          "default_entry",
          [](const CheckedProgram& p) {
            try {
              return p.default_entry();
            } catch (const UsageError& e) {
              throw py::value_error(e.what());
            }
          },
          "the entry when none is named (driver::default_entry); ValueError when none is")
      .def_property_readonly("warnings", &CheckedProgram::warnings,
                             "the checker's warnings and notes, rendered")
      .def("info", &CheckedProgram::info, py::arg("variant"))
      .def("unparse", &CheckedProgram::unparse, py::arg("variant"))
      .def("compile", &compile, py::arg("variant"), py::arg("cache_dir") = "", py::arg("cxx") = "",
           py::arg("openmp") = true, py::arg("verbose") = false, py::arg("index_checks") = true,
           py::arg("target") = driver::kDefaultTarget)
      .def("interpret", &interpret, py::arg("variant"), py::arg("inputs"), py::arg("sizes"))
      .def(
          "random_inputs",
          [](const CheckedProgram& p, const Variant& v, const ir::SizeBindings& sizes,
             uint64_t seed) { return to_arrays(p.random_inputs(v, sizes, seed)); },
          py::arg("variant"), py::arg("sizes"), py::arg("seed"))
      .def("gradcheck", &gradcheck, py::arg("entry"), py::arg("request"), py::arg("sizes"),
           py::arg("inputs"), py::arg("seed"), py::arg("step"), py::arg("tolerance"),
           py::arg("max_entries"));

  bind_cuda(m);
  m.def("runtime_dir", &jit::runtime_dir,
        "where JIT-compiled code finds the runtime headers ($TENET_RUNTIME_DIR)");
}
