#include "python/src/extension.h"

#include <pybind11/stl.h>

#include "extension/torch_project.h"
#include "jit/cache.h"
#include "jit/jit.h"
#include "support/error.h"

namespace py = pybind11;

namespace tenet::python {

namespace {

py::dict emit_torch_project(const std::string& path, const std::optional<std::string>& text,
                            const std::string& dir, const std::string& ns,
                            const std::vector<std::string>& functions, const std::string& name,
                            const std::map<std::string, int64_t>& sizes, bool openmp,
                            bool index_checks, bool overwrite) {
  extension::TorchProjectOptions options;
  options.ns = ns;
  options.functions = functions;
  options.name = name;
  options.sizes = sizes;
  options.openmp = openmp;
  options.index_checks = index_checks;
  options.overwrite = overwrite;
  extension::TorchProject project;
  try {
    py::gil_scoped_release release;
    project = extension::emit_torch_project(path, text, dir, options);
  } catch (const UsageError& e) {  // a bad name or size: the caller's arguments
    throw py::value_error(e.what());
  }
  py::dict d;
  d["namespace"] = project.ns;
  d["operators"] = project.operators;
  d["sources"] = project.sources;
  d["uses_gemm"] = project.uses_gemm;
  return d;
}

}  // namespace

void bind_extension(py::module_& m) {
  m.def("emit_torch_project", &emit_torch_project, py::arg("path"), py::arg("text"), py::arg("dir"),
        py::arg("namespace"), py::arg("functions"), py::arg("name"), py::arg("sizes"),
        py::arg("openmp"), py::arg("index_checks"), py::arg("overwrite"),
        "writes a PyTorch C++ extension of a program's functions (tenet emit --target torch)");
  m.def("blas_library", &jit::blas_library,
        "the CBLAS library JIT-compiled contractions link ('none': plain loops)");
  m.def("dnnl_library", &jit::dnnl_library,
        "the oneDNN library float32 contractions call ('none': not used)");
  m.def("default_cache_dir", &jit::detail::default_cache_dir,
        "where compiled code is cached ($TENET_CACHE_DIR, ~/.cache/tenet, ...)");
}

}  // namespace tenet::python
