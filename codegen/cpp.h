/// \file
/// The C++ backend: turns IR functions into one readable, standalone C++17
/// translation unit (a header and a source) with a C ABI.
///
/// Expects: a verified module (ir/verify.h); the functions to emit by name
/// (all of them when the list is empty). Guarantees: the source uses only the
/// standard library, OpenMP pragmas and runtime/tenet_runtime.h; it computes
/// what ir::interpret computes, reducing in the interpreter's order (out
/// indices outer, reduce indices inner, in declaration order; one thread per
/// out element, so results do not depend on the thread count); except that
/// statements with a GEMM plan (ir/gemm_plan.h) call tenet::gemm
/// of runtime/tenet_gemm.h, which sums in the GEMM library's order. For each
/// function `f` with size parameters S..., inputs I... and outputs O... it
/// defines, with C linkage (`tenet_f` is c_symbol(f)):
///
///   void    tenet_f(int64_t S..., const T* I..., T* O...);     // allocates its workspace
///   int64_t tenet_f__workspace_bytes(int64_t S...);             // scratch memory f needs
///   void    tenet_f__with_workspace(int64_t S..., const T* I..., T* O..., void* workspace);
///   int     tenet_f__packed(const int64_t* sizes, void* const* buffers);  // 0 = ok
///   int64_t tenet_f__packed_workspace_bytes(const int64_t* sizes);  // -1: a negative size,
///                                                               //     or an overflow
///   int     tenet_f__packed_with_workspace(const int64_t* sizes, void* const* buffers,
///                                          void* workspace);    // allocates nothing; 0 = ok
///   const char* tenet_f__signature(void);                       // see abi_signature()
///
/// No name of the program can collide with anything of the C/C++ world: the
/// symbols all start with "tenet_" (or "tenetx_"), every identifier made from
/// a name of the program with "t_" (detail::kNamePrefix), and the
/// identifiers generated code declares for itself with neither.
///
/// Buffers are dense and row-major, must not overlap, and the workspace is
/// 64-byte aligned. Tensors of rank 0 are passed as pointers to one element.
/// An output that updates an input (ir::Function::updated_input: TC's
/// accumulation into an output the caller supplies) is one in/out buffer
/// among the outputs, holding the initial value on entry; that input is not
/// among the `const T* I...` (the signature says `inout`).
///
/// The workspace is planned (lower/memory_plan.h): temporaries that are
/// never live at the same time share memory, and the buffers of a statement
/// lowered to GEMM calls hold at most CppOptions::pack_budget_bytes (the
/// statement runs in chunks, codegen/gemm_chunks.h), so f__workspace_bytes
/// is what the largest set of simultaneously live temporaries needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/lowered.h"

namespace tenet::codegen {

struct CppOptions {
  /// Parallelise the outermost loop of large statements with OpenMP.
  bool openmp = true;
  /// A statement is "large" when out elements times reduction length reaches
  /// this; smaller ones stay serial (a parallel region costs microseconds).
  int64_t parallel_min_work = 32768;
  /// Base name of the header and source ("<unit_name>.h"); empty: the
  /// function's symbol (c_symbol) when there is one function, else
  /// "tenet_kernels" ("tenet_runtime_kernels" for a function named `runtime`,
  /// whose symbol names a runtime header).
  std::string unit_name;
  /// Where the IR came from (e.g. the .tn path), for the banner comment.
  std::string origin;
  /// A statement lowered to GEMM calls whose pack buffers (im2col matrices,
  /// packed results, a split's columns) would take more bytes than this runs
  /// in chunks along one of its out indices, each within this budget (as far
  /// as one slice of the index allows); 0 turns chunking off. The default
  /// keeps GEMMs large: see docs/performance.md, "Memory".
  int64_t pack_budget_bytes = int64_t(32) << 20;
  /// Check every computed index (a data-dependent read like LUT(I(i), j))
  /// at run time, except where a proof makes it needless (docs/language.md):
  /// an index out of range fails the call with a message. Turning this off
  /// is for release code whose index data is known to be in range: an index
  /// out of range then reads outside the tensor.
  bool index_checks = true;
  /// How the kernels of a GPU target (lower/kernels.h) are printed: as C++
  /// functions that runtime/tenet_emulator.h runs thread by thread
  /// (Emulated: the `cuda-emulated` target, built and loaded as C++), or as
  /// CUDA __global__ functions (Cuda). The CPU target's tree has none.
  enum class Kernels { None, Emulated, Cuda };
  Kernels kernels = Kernels::None;
  /// Time each top-level statement of every function (runtime/tenet_profile.h):
  /// the unit defines TENET_PROFILE and writes a table of regions when it is
  /// unloaded. The JIT sets it where the environment has TENET_PROFILE.
  bool profile = false;
};

struct CppUnit {
  std::string unit_name;    // "softmax": the base of the file names
  std::string header_name;  // "softmax.h"
  std::string header;
  std::string source_name;  // "softmax.cpp"; includes header_name and "tenet_runtime.h"
  std::string source;
  /// Some statement calls tenet::gemm (runtime/tenet_gemm.h): the source
  /// includes tenet_gemm.h and must be built with a BLAS backend macro and
  /// linked with that BLAS, or it uses the header's plain loops.
  bool uses_gemm = false;
  /// Kernels::Cuda: the kernels, a CUDA source of their own ("softmax.cu",
  /// including tenet_cuda_device.h) that NVRTC compiles; the host source
  /// launches them by name. Empty for the other dialects.
  std::string kernels_name;
  std::string kernels;
  /// Kernels::Cuda: the host source includes runtime/tenet_cuda.h and links
  /// the CUDA runtime and cuBLAS.
  bool uses_cuda = false;
};

/// Prints lowered functions (lower/lowered.h: the driver's lowering stages)
/// as one unit: the C++ backend only names and prints. Throws InternalError
/// for IR the backend cannot express (the verifier and the checker are meant
/// to rule that out).
CppUnit emit_cpp(const std::vector<const lower::LoweredFunction*>& functions,
                 const CppOptions& options = {});

/// The C symbol of a function, in a namespace of Tenet's own so that it can
/// neither collide with a symbol of the libraries the code links (a function
/// named `omp_get_thread_num` would have libgomp's calls from the same
/// library bind to it) nor with a macro: "tenet_" + the name when that is a
/// plain identifier (no leading '_', no "__"), e.g. "tenet_softmax"; otherwise
/// "tenetx_" + the name with 'u' as "uu", '_' as "u_" and other bytes as "ux"
/// and two hex digits, e.g. "tenetx_u_x" for "_x". Distinct names give
/// distinct symbols, and none contains "__", which separates the suffixes of
/// the entry points ("tenet_f__packed").
std::string c_symbol(const ir::Function& fn);

/// The prefix of what a CUDA unit named `unit` defines for its loader and
/// build (`<prefix>__load_kernels`, `<prefix>__kernels_image`,
/// runtime/tenet_cuda.h's TENET_CUDA_UNIT): the unit's name with every byte
/// that is not a letter, a digit or '_' as '_' ("tenet_kernels" stays), so
/// that two units linked into one program keep their kernels apart.
std::string cuda_unit_symbol(const std::string& unit);

/// The string tenet_f__signature() returns, describing the ABI so a loader can
/// check that a library matches the IR it was built from, e.g.
///   "tenet-abi-3 tenet_softmax(sizes N, K; in float32 z[N, K]; out float32 p[N, K])"
std::string abi_signature(const ir::Function& fn);

}  // namespace tenet::codegen
