/// \file
/// `tenet emit FILE --target torch -o DIR` (and tenet.torch_extension in
/// Python): a program's functions as a PyTorch C++ extension.
///
/// Expects: a program (file or text) whose chosen functions have at least one
/// input, whose size parameters are the sizes of input dimensions or are
/// fixed in `sizes`, and whose tensors have dtypes PyTorch supports fully (not
/// uint16/32/64). Guarantees: `dir` holds
///   - <ns>_kernels.{h,cpp} and <ns>_kernels_f64.{h,cpp}: the generated C
///     functions (each function, its vector-Jacobian programs; the second as
///     if every float were float64), and the runtime headers they include;
///   - <ns>_ops.cpp and <ns>.h: the operators (extension/torch_ops.h);
///   - CMakeLists.txt: `find_package(Torch)`, a shared library lib<ns>.so;
///   - README.md: how to build it with CMake or torch.utils.cpp_extension,
///     load it from Python (torch.ops.load_library) and call it from C++.
/// The project does not depend on Tenet. Bad requests (an unknown function,
/// a name PyTorch cannot take, an undetermined size) are UsageError or
/// CompileError; a folder that already holds the files is a BindError unless
/// `overwrite`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tenet::extension {

struct TorchProjectOptions {
  /// The operators' namespace (torch.ops.<ns>, <ns>::<name> in C++); empty:
  /// the file's stem, made an identifier.
  std::string ns;
  /// The functions to make operators of; empty: every def.
  std::vector<std::string> functions;
  /// With one function: the operator's name (default: the function's).
  std::string name;
  /// Size parameters no input's shape determines, fixed in the extension.
  std::map<std::string, int64_t> sizes;
  bool openmp = true;        // parallel loops in the generated code
  bool index_checks = true;  // run-time checks of computed indices
  bool overwrite = false;    // replace the files of a project already in `dir`
};

struct TorchProject {
  std::string ns;
  std::vector<std::string> operators;  // <ns>::<name>, backwards included
  std::vector<std::string> sources;    // the .cpp files, for cpp_extension.load
  bool uses_gemm = false;              // the kernels call tenet::gemm
};

/// Writes the extension of the program at `path` (or of `text`, which
/// `path` then only names) into `dir`.
TorchProject emit_torch_project(const std::string& path, const std::optional<std::string>& text,
                                const std::string& dir, const TorchProjectOptions& options);

/// A namespace or operator name PyTorch and C++ both accept, or a UsageError
/// saying why not (`what`: "namespace", "operator name").
void check_torch_name(const std::string& name, const std::string& what);

}  // namespace tenet::extension
