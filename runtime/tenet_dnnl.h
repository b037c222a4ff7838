/// \file
/// What the oneDNN primitives of tenet_gemm.h and tenet_conv.h share: the
/// engine, a stream per thread, buffers that grow and are kept, and memory
/// objects pointed at each call's data. A steady call allocates nothing.
///
/// Only where the JIT links oneDNN (TENET_GEMM_DNNL) and <dnnl.h> is
/// installed; it then defines TENET_DNNL_PRIMITIVES.
#pragma once

#if defined(TENET_GEMM_DNNL) && __has_include(<dnnl.h>)
#include <dnnl.h>
#define TENET_DNNL_PRIMITIVES 1

#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>

namespace tenet::dnnl_detail {

/// A buffer of at least the bytes last asked for, 64-byte aligned; it grows
/// and is kept (a primitive's scratchpad, an operand in its layout).
struct Buffer {
  std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
  size_t bytes = 0;
  void* get(size_t want) {
    if (want > bytes) {
      data.reset(static_cast<char*>(std::aligned_alloc(64, (want + 63) / 64 * 64)));
      bytes = data ? want : 0;
    }
    return data.get();
  }
};

inline dnnl_engine_t engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t made = nullptr;
    return dnnl_engine_create(&made, dnnl_cpu, 0) == dnnl_success ? made : nullptr;
  }();
  return e;
}

inline dnnl_stream_t stream() {
  thread_local dnnl_stream_t s = [] {
    dnnl_stream_t made = nullptr;
    return dnnl_stream_create(&made, engine(), dnnl_stream_default_flags) == dnnl_success ? made
                                                                                          : nullptr;
  }();
  return s;
}

/// `m`, a memory object in layout `md`, pointed at `data`; false on failure.
inline bool bind(dnnl_memory_t& m, const dnnl_memory_desc_t& md, const void* data) {
  if (!data) return false;
  if (!m) return dnnl_memory_create(&m, &md, engine(), const_cast<void*>(data)) == dnnl_success;
  return dnnl_memory_set_data_handle(m, const_cast<void*>(data)) == dnnl_success;
}

/// Runs `primitive` with `args` and, where it needs one (`scratchpad_bytes`
/// > 0), the calling thread's scratchpad: `buffer`, through `memory`.
inline bool execute(dnnl_primitive_t primitive, const std::array<dnnl_exec_arg_t, 3>& args,
                    const dnnl_memory_desc_t& scratchpad, size_t scratchpad_bytes,
                    dnnl_memory_t& memory, Buffer& buffer) {
  std::array<dnnl_exec_arg_t, 4> all = {args[0], args[1], args[2], {DNNL_ARG_SCRATCHPAD, nullptr}};
  int count = 3;
  if (scratchpad_bytes > 0) {
    if (!bind(memory, scratchpad, buffer.get(scratchpad_bytes))) return false;
    all[3].memory = memory;
    count = 4;
  }
  return dnnl_primitive_execute(primitive, stream(), count, all.data()) == dnnl_success;
}

}  // namespace tenet::dnnl_detail

#endif
