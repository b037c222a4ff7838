/// \file
/// Ahead-of-time output: a standalone C++ project for IR functions, for users
/// who build their own binaries (`tenet emit FILE --target cpp -o DIR`).
///
/// Expects: a verified module; the functions to emit (all when empty).
/// Guarantees: `dir` then holds <unit>.h and <unit>.cpp (see cpp.h for the
/// ABI), copies of the runtime headers they include, a CMakeLists.txt that
/// builds a static library <unit> and a shared library <unit>_shared (file
/// name lib<unit>.so) with nothing but a C++17 compiler and, when found,
/// OpenMP, and a README.md showing how to build and call them. The project
/// does not depend on Tenet. Other files in `dir` are kept; one of these
/// already there is a BindError (nothing is written) unless `overwrite`.
/// An unwritable directory is a BindError, as are runtime headers that
/// another user could have changed (docs/security.md).
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp.h"
#include "ir/ir.h"

namespace tenet::jit {

/// Writes `code` (the driver's `cpp` stage), the runtime headers, a
/// CMakeLists.txt and a README (its example calls `first`) into `dir`.
void emit_project(const codegen::CppUnit& code, const ir::Function& first, const std::string& dir,
                  bool overwrite = false);

/// What the emitters write: a path relative to the project folder, and the text.
struct ProjectFile {
  std::string name;
  std::string text;
};

/// The runtime headers (runtime_dir(), jit/jit.h), each by its file name.
/// A BindError when one is not to be trusted (docs/security.md).
std::vector<ProjectFile> runtime_header_files();

/// Writes `files` under `dir`, creating folders. Unless `overwrite`, a file
/// already there is a BindError and nothing is written.
void write_project(const std::vector<ProjectFile>& files, const std::string& dir, bool overwrite);

/// The CMake lines that link a CBLAS library into `libraries` (targets,
/// separated by spaces) and compile `objects` (the target of the generated
/// code, which calls tenet::gemm) with TENET_GEMM_CBLAS, or leave
/// tenet_gemm.h's plain loops when none is found; `project` names it in the
/// message.
/// The CUDA target's project (CppUnit::uses_cuda; aot_cuda.cpp): its
/// CMakeLists.txt, and the CMake script that embeds the kernels' fatbin.
std::string cmake_lists_cuda(const std::string& unit);
std::string embed_kernels_cmake();
/// For a project that builds the CUDA unit's host source in its own target
/// `objects` (a training project): the toolkit, the architectures option
/// `option`, the kernels compiled and embedded, added to `objects`, and the
/// CUDA runtime and cuBLAS linked into `objects` and `libraries` (targets
/// separated by spaces).
std::string cmake_cuda_unit_lines(const std::string& unit, const std::string& option,
                                  const std::string& objects, const std::string& libraries);

std::string cmake_blas_lines(const std::string& objects, const std::string& libraries,
                             const std::string& project);

}  // namespace tenet::jit
