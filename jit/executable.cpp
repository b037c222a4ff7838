#include "jit/executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "codegen/c_text.h"
#include "ir/bind.h"
#include "lower/bounds_check.h"
#include "runtime/tenet_runtime.h"
#include "support/checked.h"
#include "support/error.h"

namespace tenet::jit {

namespace {

/// "float32[B, 10] = [100, 10]": a declared shape and its values.
std::string describe_expected(const ir::Value& v, const std::vector<int64_t>& shape) {
  std::string dims, values;
  for (size_t d = 0; d < shape.size(); ++d) {
    dims += (d ? ", " : "") + v.shape[d].str();
    values += (d ? ", " : "") + std::to_string(shape[d]);
  }
  std::string out = std::string(type_name(v.type)) + "[" + dims + "]";
  return dims == values ? out : out + " = [" + values + "]";
}

bool matches(const Tensor& t, const ir::Value& v, const std::vector<int64_t>& shape) {
  return t.type() == v.type && t.shape() == shape;
}

/// glibc keeps what libraries free between calls (executable.h). Set when
/// the program or module is loaded: set later, once the OpenMP threads'
/// arenas exist, the MNIST CNN's steps still faulted (69 to 94 in 12).
const bool kept_freed_memory = [] {
#ifdef __GLIBC__
  const char* opt_out = std::getenv("TENET_KEEP_FREED_MEMORY");
  if (opt_out && std::string(opt_out) == "0") return false;
  // 32 MiB is glibc's largest mmap threshold on 64-bit. The heap grows by
  // 64 MiB at a time and is never trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  // Every thread allocates from the main heap, whose freed memory the
  // settings above keep. With the OpenMP workers' own arenas, dnnl_sgemm's
  // per-call buffers took 24 to 50 faults per CapsNet training step (0 with
  // one arena). GEMMs now run oneDNN's brgemm matmul on dense blocks with a
  // scratchpad of their own (tenet_gemm.h), which allocate nothing per call;
  // one arena stays for what other libraries allocate in worker threads (the
  // Executable tests' steps: 0 faults in 8 runs with it).
  mallopt(M_ARENA_MAX, 1);
  return true;
#else
  return false;
#endif
}();

}  // namespace

void Executable::FreeArena::operator()(void* p) const {
  std::free(p);
}

Executable::Executable(const CompiledFunction& f, const ir::SizeBindings& sizes)
    : f_(f), sizes_(sizes) {
  const ir::Function& fn = f_.function();
  for (const auto& [name, value] : sizes_)
    if (std::find(fn.size_params.begin(), fn.size_params.end(), name) == fn.size_params.end())
      throw BindError("'" + fn.name + "' has no size parameter '" + name + "'");
  ir::check_sizes(fn, sizes_);
  lower::check_reads_in_bounds(fn, sizes_);
  for (const std::string& s : fn.size_params) {
    auto it = sizes_.find(s);
    size_values_.push_back(it == sizes_.end() ? 0 : it->second);  // 0: a parameter nothing uses
  }
  for (const auto& v : fn.inputs) input_shapes_.push_back(ir::concrete_shape(*v, sizes_));
  for (const auto& v : fn.outputs) {
    output_shapes_.push_back(ir::concrete_shape(*v, sizes_));
    outputs_.push_back(ir::allocate(*v, sizes_));
  }
  for (const Tensor& t : outputs_) output_bytes_.push_back(t.nbytes());
  in_.assign(fn.inputs.size(), nullptr);
  buffers_.reserve(fn.inputs.size() + fn.outputs.size());
  out_.assign(fn.outputs.size(), nullptr);

  workspace_bytes_ = f_.entry_.workspace_bytes(size_values_.data());
  std::string what = "the workspace of '" + fn.name + "'";
  for (size_t i = 0; i < fn.size_params.size(); ++i)
    what += (i ? ", " : " for ") + fn.size_params[i] + " = " + std::to_string(size_values_[i]);
  if (workspace_bytes_ < 0) throw BindError(what + " overflows a 64-bit byte size");
  if (workspace_bytes_ > 0) {
    // A multiple of the alignment, as aligned_alloc requires (plan_workspace
    // sums aligned sizes); every page is written once here so that no call
    // faults it in.
    const int64_t bytes = workspace_bytes_;
    TENET_ASSERT(bytes % tenet::kWorkspaceAlignment == 0, what << " is " << bytes << " bytes");
    check_allocation(what, bytes);
    void* arena = std::aligned_alloc(size_t(tenet::kWorkspaceAlignment), size_t(bytes));
    if (!arena) allocation_failed(what, bytes);
    std::memset(arena, 0, size_t(bytes));
    arena_.reset(arena);
  }
}

Executable Executable::for_inputs(const CompiledFunction& f, const std::vector<Tensor>& inputs,
                                  const ir::SizeBindings& given) {
  return Executable(f, ir::bind_sizes(f.function(), inputs, given));
}

Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

const std::vector<Tensor>& Executable::run(const std::vector<Tensor>& inputs) {
  check_inputs(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) in_[i] = inputs[i].raw();
  for (size_t i = 0; i < outputs_.size(); ++i) out_[i] = outputs_[i].raw();
  call();
  return outputs_;
}

void Executable::run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  check_inputs(inputs);
  check_outputs(outputs);
  for (size_t i = 0; i < inputs.size(); ++i) in_[i] = inputs[i].raw();
  for (size_t i = 0; i < outputs.size(); ++i) out_[i] = outputs[i].raw();
  call();
}

void Executable::run_raw(const void* const* inputs, void* const* outputs) {
  for (size_t i = 0; i < in_.size(); ++i) in_[i] = inputs[i];
  for (size_t i = 0; i < out_.size(); ++i) out_[i] = outputs[i];
  call();
}

namespace {

/// Libraries allocate in every call too (oneDNN 2.6's dnnl_primitive_execute
/// builds its execution context with operator new). glibc reuses what they
/// free, but their blocks creep up the heap and, about once in 30 to 60 steps
/// of LeNet-5's training, touch a page of the heap's top for the first time:
/// a fault in _int_malloc. After the first call has made what lasts (oneDNN's
/// primitives), a block carved from the top, written and freed, leaves the
/// pages above it resident: the top is never trimmed (kept_freed_memory).
void write_heap_headroom() {
  if (!kept_freed_memory) return;
  constexpr size_t kHeadroom = size_t(2) << 20;
  void* block = std::malloc(kHeadroom);
  if (!block) return;
  std::memset(block, 0, kHeadroom);
  asm volatile("" : : "r"(block) : "memory");  // the writes are kept
  std::free(block);
}

}  // namespace

void Executable::call() {
  f_.pack(in_.data(), out_.data(), output_bytes_, buffers_);
  const int status = f_.entry_.with_workspace(size_values_.data(), buffers_.data(), arena_.get());
  if (status != 0) f_.fail(status, sizes_);
  if (!headroom_) {
    headroom_ = true;
    write_heap_headroom();
  }
}

void Executable::check_inputs(const std::vector<Tensor>& inputs) const {
  const ir::Function& fn = f_.function();
  bool ok = inputs.size() == fn.inputs.size();
  for (size_t i = 0; ok && i < inputs.size(); ++i)
    ok = matches(inputs[i], *fn.inputs[i], input_shapes_[i]);
  if (ok) return;
  // bind_sizes words the mismatch (count, type or shape) as run() reports it.
  ir::bind_sizes(fn, inputs, sizes_);
  throw BindError("the inputs of '" + fn.name + "' do not have the shapes it was bound to");
}

void Executable::check_outputs(const std::vector<Tensor>& outputs) const {
  const ir::Function& fn = f_.function();
  if (outputs.size() != fn.outputs.size())
    throw BindError("'" + fn.name + "' has " + std::to_string(fn.outputs.size()) +
                    (fn.outputs.size() == 1 ? " output, " : " outputs, ") +
                    std::to_string(outputs.size()) + " given");
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!matches(outputs[i], *fn.outputs[i], output_shapes_[i]))
      throw BindError("output '" + codegen::detail::output_name(fn, i) + "': expected " +
                      describe_expected(*fn.outputs[i], output_shapes_[i]) + ", got " +
                      outputs[i].describe());
}

}  // namespace tenet::jit
