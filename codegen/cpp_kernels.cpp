// The kernels of a GPU target (lower/kernels.h): each Kernel node printed as
// a function of its own, in CUDA (a __global__ function) or for the grid
// emulator (runtime/tenet_emulator.h: a C++ function taking its thread's
// blockIdx, blockDim and threadIdx), with the same body text in both; the
// host prints its launch. A kernel's parameters are the host's names its
// body mentions: sizes, extents and strides, tensors, host loop variables.
#include <algorithm>
#include <cctype>
#include <string>

#include "codegen/function_emitter.h"
#include "lower/kernel_nodes.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

/// The tensors the assignments of `block` write.
void written_tensors(const lower::Block& block, std::set<const ir::Value*>& out) {
  for (const lower::Node& n : block) {
    if (n.kind == lower::NodeKind::Assign && n.target.tensor) out.insert(n.target.tensor);
    written_tensors(n.body, out);
    written_tensors(n.orelse, out);
  }
}

}  // namespace

void FunctionEmitter::print_kernel(Code& code, const lower::Node& n, const Scope& scope) {
  TENET_ASSERT(options_.kernels != CppOptions::Kernels::None,
               "a kernel in the loop tree of " << fn_.name << " for a target without kernels");
  TENET_ASSERT(thread_.empty(), "a kernel inside a kernel in " << fn_.name);
  const std::string name = symbol_ + "__k" + std::to_string(kernels_.size());
  kernels_.emplace_back();  // numbered before the kernels inside it would be
  const CExpr threads_expr = index_text(n.end, scope);
  const std::string& threads = threads_expr.text;
  const std::string lanes = n.grouped ? print_lanes(code, n, scope) : "";

  // The kernel's names avoid the host's around it, and CUDA's built-ins.
  Namer names = namers_.empty() ? names_ : namers_.back().namer;
  for (const char* builtin : {"blockIdx", "blockDim", "threadIdx"}) names.reserve(builtin);
  namers_.push_back(NameScope{std::move(names), {}});
  declare(n.var);
  thread_ = var_name(n.var);
  kernel_locals_ = {thread_};
  outermost_grid_loop_ = true;
  Code body(1);
  body.line("const int64_t " + thread_ + " = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;");
  if (n.grouped)
    print_group_prologue(body, n, threads);  // every thread runs on: the group reduces
  else
    body.line("if (" + thread_ + " >= " + threads + ") return;");
  Scope inner = scope;
  print_block(body, n.body, inner);
  thread_.clear();
  lanes_.clear();
  namers_.pop_back();

  std::set<const ir::Value*> written;
  written_tensors(n.body, written);
  const auto params = kernel_parameters(body.str(), written);
  kernels_[kernels_.size() - 1] = kernel_definition(name, params, body.str(), n.count);
  std::string args;
  for (const auto& [type, param] : params)
    args += ", " + (param == kIndexFault ? param + ".on_device()" : param);
  if (n.grouped) {
    code.line("tenet::device::launch_grouped(" + name + ", " +
              wrap(threads_expr, kPrecMultiplicative) + " * " + lanes + ", " +
              std::to_string(n.count) + args + ");");
    host_vars_.pop_back();
    return code.close();
  }
  code.line("tenet::device::launch(" + name + ", " + threads + ", " + std::to_string(n.count) +
            args + ");");
}

void FunctionEmitter::print_grid_loop(Code& code, const lower::Node& n, const Scope& scope) {
  TENET_ASSERT(!thread_.empty(), "a loop of a grid outside its kernel in " << fn_.name);
  declare(n.var);
  const std::string v = var_name(n.var);
  std::string value = thread_;
  if (!(n.grid_stride->kind == lower::IndexKind::Const && n.grid_stride->value == 1))
    value += " / " + wrap(index_text(n.grid_stride, scope), kPrecMultiplicative + 1);
  const bool from_zero = n.first->kind == lower::IndexKind::Const && n.first->value == 0;
  const CExpr first = index_text(n.first, scope);
  const std::string extent = from_zero ? wrap(index_text(n.end, scope), kPrecMultiplicative + 1)
                                       : "(" + index_text(n.end, scope).text + " - " +
                                             wrap(first, kPrecAdditive + 1) + ")";
  // The outermost loop of the grid: the thread index is below its extent
  // times the stride (the kernel returned otherwise).
  if (!outermost_grid_loop_) value += " % " + extent;
  outermost_grid_loop_ = false;
  if (!from_zero) value = first.text + " + " + value;
  code.open("");
  code.line("const int64_t " + v + " = " + value +
            (lanes_.empty() ? ";  // one per thread" : ";  // one per group of lanes"));
  print_block(code, n.body, scope);
  code.close();
}

/// Opens a scope of the host code, closed after the kernel's launch.
std::string FunctionEmitter::print_lanes(Code& code, const lower::Node& kernel,
                                         const Scope& scope) {
  // Named on the host, where the kernel's names then avoid it.
  const bool top_level = namers_.empty();
  if (top_level) namers_.push_back(NameScope{names_, {}});
  declare(kernel.group.at(0));
  if (top_level) namers_.pop_back();
  const std::string lanes = var_name(kernel.group[0]);
  host_vars_.push_back(lanes);
  reduce_length_ = index_text(kernel.reduce_length, scope).text;
  code.open("");  // closed after the launch
  code.line("const int64_t " + lanes + " = tenet::group_lanes(" +
            index_text(kernel.end, scope).text + ", " + reduce_length_ +
            ");  // threads per element, by the shape");
  return lanes;
}

void FunctionEmitter::print_group_prologue(Code& body, const lower::Node& kernel,
                                           const std::string& groups) {
  lanes_ = var_name(kernel.group.at(0));
  for (size_t i = 1; i < 4; ++i) declare(kernel.group.at(i));
  lane_ = var_name(kernel.group[1]);
  active_ = var_name(kernel.group[2]);
  const std::string element = var_name(kernel.group[3]);
  const std::string group = thread_ + " / " + lanes_;
  body.line("const int64_t " + lane_ + " = " + thread_ + " % " + lanes_ + ";");
  body.line("const bool " + active_ + " = " + group + " < " + groups + ";");
  const bool one_element = kernel.end->kind == lower::IndexKind::Const && kernel.end->value == 1;
  if (!one_element) {  // the grid's loops take their indices from the element
    body.note(
        "The spare threads of the last block compute its last element again; they store "
        "nothing.");
    body.line("const int64_t " + element + " = " + active_ + " ? " + group + " : " + groups +
              " - 1;");
    thread_ = element;
  }
  lane_index_var_ = kernel.group.at(4);
  lane_index_.clear();
  outermost_lane_loop_ = true;
}

void FunctionEmitter::print_lane_loop(Code& code, const lower::Node& n, const Scope& scope) {
  TENET_ASSERT(!lanes_.empty(),
               "a loop of a group's lanes outside a grouped kernel in " << fn_.name);
  declare(n.var);
  const std::string v = var_name(n.var);
  const CExpr first = index_text(n.first, scope);
  const bool from_zero = lower::kernel_nodes::is_zero(n.first);
  const bool unit_stride =
      n.grid_stride->kind == lower::IndexKind::Const && n.grid_stride->value == 1;
  if (outermost_lane_loop_ && unit_stride) {  // the one loop the lanes share
    outermost_lane_loop_ = false;
    code.open("for (int64_t " + v + " = " + (from_zero ? lane_ : first.text + " + " + lane_) +
              "; " + v + " < " + wrap(index_text(n.end, scope), kPrecRelational + 1) + "; " + v +
              " += " + lanes_ + ")");
    print_block(code, n.body, scope);
    return code.close();
  }
  std::string value = lane_index_;
  if (!unit_stride)
    value += " / " + wrap(index_text(n.grid_stride, scope), kPrecMultiplicative + 1);
  const std::string extent = from_zero ? wrap(index_text(n.end, scope), kPrecMultiplicative + 1)
                                       : "(" + index_text(n.end, scope).text + " - " +
                                             wrap(first, kPrecAdditive + 1) + ")";
  const bool outermost = outermost_lane_loop_;
  if (outermost) {  // the loops the lanes share, collapsed into one iteration index
    outermost_lane_loop_ = false;
    declare(lane_index_var_);
    lane_index_ = var_name(lane_index_var_);
    value = lane_index_ + " / " + wrap(index_text(n.grid_stride, scope), kPrecMultiplicative + 1);
    code.open("for (int64_t " + lane_index_ + " = " + lane_ + "; " + lane_index_ + " < " +
              reduce_length_ + "; " + lane_index_ + " += " + lanes_ + ")");
  } else {
    value += " % " + extent;
    code.open("");
  }
  if (!from_zero) value = first.text + " + " + value;
  code.line("const int64_t " + v + " = " + value + ";  // shared by the lanes");
  print_block(code, n.body, scope);
  code.close();
}

void FunctionEmitter::print_group_reduce(Code& code, const lower::Node& n) {
  static const char* combine[] = {"", "Sum", "Max", "Min", "Prod"};
  const std::string acc = var_name(n.var);
  code.line(acc + " = tenet::group_reduce<tenet::Combine::" + combine[int(n.op)] + ">(" + acc +
            ", threadIdx.x, " + lanes_ + ");");
}

void FunctionEmitter::print_group_leader(Code& code, const lower::Node& n, const Scope& scope) {
  code.open("if (" + active_ + " && " + lane_ + " == 0)");
  print_block(code, n.body, scope);
  code.close();
}

std::vector<std::pair<std::string, std::string>> FunctionEmitter::kernel_parameters(
    const std::string& text, const std::set<const ir::Value*>& written) const {
  std::set<std::string> written_pointers;
  for (const ir::Value* v : written) written_pointers.insert(access_of(v).pointer);
  std::map<std::string, std::string> known;                              // host name -> its type
  for (const auto& [size, name] : size_names_) known[name] = "int64_t";  // chunk sizes too
  for (const auto& [name, expr] : size_locals_) known[name] = "int64_t";
  for (const auto& tensor : strides_)
    for (const auto& [name, expr] : tensor) known[name] = "int64_t";
  for (const std::string& v : host_vars_) known[v] = "int64_t";
  for (const auto& [value, access] : tensors_) {
    if (memory_.row_local.count(value)) continue;  // an array of the kernel's own
    const bool read_only = !written_pointers.count(access.pointer);
    known[access.pointer] = (read_only ? "const " : "") + c_type(value->type) + "*";
  }
  if (checks_indices()) known[kIndexFault] = "tenet::IndexFault&";
  std::vector<std::pair<std::string, std::string>> params;
  for (const std::string& word : words_of(text)) {  // numbers match no name
    if (kernel_locals_.count(word)) continue;       // the kernel declares it
    if (auto it = known.find(word); it != known.end()) params.emplace_back(it->second, word);
  }
  return params;
}

std::string FunctionEmitter::kernel_definition(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
    const std::string& body, int64_t per_block) const {
  const bool cuda = options_.kernels == CppOptions::Kernels::Cuda;
  std::string list = cuda ? ""
                          : "tenet::emu::Dim3 blockIdx, tenet::emu::Dim3 blockDim, "
                            "tenet::emu::Dim3 threadIdx";
  std::string prologue;
  for (const auto& [type, param] : params) {
    std::string decl = type + " " + param;
    if (cuda && param == kIndexFault) {  // a kernel's parameters are values
      decl = "tenet::IndexFault* " + param + "_at";
      prologue = "  tenet::IndexFault& " + param + " = *" + param + "_at;\n";
    }
    list += (list.empty() ? "" : ", ") + decl;
  }
  // A block's threads: ptxas fits the registers to it (no launch fails for them).
  const std::string head =
      cuda ? "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(per_block) + ") "
           : "static void ";
  std::string signature = break_line(head + name + "(" + list + ") {", 0, Code::kColumnLimit);
  if (signature.empty() || signature.back() != '\n') signature += '\n';
  return signature + prologue + body + "}\n";
}

std::string FunctionEmitter::copy_text(const std::string& from, const std::string& count,
                                       const std::string& to) const {
  if (on_device()) return "tenet::device::copy(" + from + ", " + count + ", " + to + ");";
  return "std::copy_n(" + from + ", " + count + ", " + to + ");";
}

void FunctionEmitter::emit_device_call(Code& code) {
  code.note("The buffers are the caller's, in host memory: copied to the device, and back.");
  Code body(code.depth());
  std::string sizes, args;
  for (size_t i = 0; i < size_params_.size(); ++i) {
    sizes +=
        (i ? ", " : "const int64_t ") + size_params_[i] + " = sizes[" + std::to_string(i) + "]";
    args += (args.empty() ? "" : ", ") + size_params_[i];
  }
  size_t b = 0;
  std::vector<std::string> outputs;
  auto buffer = [&](const ir::Value& v, const std::string& name, const char* mode) {
    const std::string type = c_type(v.type);
    body.line("tenet::device::Buffer<" + type + "> " + name + "(static_cast<" + type +
              "*>(buffers[" + std::to_string(b++) + "]), " + count_text(v) +
              ", tenet::device::" + mode + ");");
    args += (args.empty() ? "" : ", ") + name + ".data()";
  };
  for (size_t i = 0; i < abi_inputs_.size(); ++i) buffer(*abi_inputs_[i], input_params_[i], "kIn");
  for (size_t i = 0; i < fn_.outputs.size(); ++i) {
    buffer(*fn_.outputs[i], output_params_[i], fn_.updated_input(i) >= 0 ? "kInOut" : "kOut");
    outputs.push_back(output_params_[i]);
  }
  body.line(symbol_ + "(" + args + ");");
  for (const std::string& out : outputs) body.line(out + ".copy_out();");  // after the call
  if (!sizes.empty()) code.line(sizes + ";");
  code.raw(used_size_locals(body.str(), code.depth()) + body.str());
}

}  // namespace tenet::codegen::detail
