// Printing one function from its lowered form: C++ names of the values, sizes,
// strides and workspace slots (where each value lives: lower/memory_plan.h);
// then the memory plan's table, the body and the ABI wrappers around it.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "codegen/function_emitter.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

/// A stride is the product of the extents inside its dimension while that has
/// at most this many symbolic factors, else the next extent times the next stride.
constexpr size_t kMaxStrideFactors = 8;

/// The identifiers `text` mentions, so that asking whether it mentions a
/// name does not scan it per name.
void add_identifiers(const std::string& text, std::unordered_set<std::string>& out) {
  for (std::string& word : words_of(text)) out.insert(std::move(word));
}

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

}  // namespace

FunctionEmitter::FunctionEmitter(const lower::LoweredFunction& lowered, std::string symbol,
                                 const CppOptions& options)
    : fn_(*lowered.function), symbol_(std::move(symbol)), options_(options), lowered_(lowered) {
  names_.reserve(symbol_);
  name_parameters();
  slot_names_.resize(memory_.slots.size());
  slot_counts_.resize(memory_.slots.size());
  name_block(fn_.body, nullptr);
}

void FunctionEmitter::name_parameters() {
  for (const std::string& s : fn_.size_params) {
    std::string name = names_.take(s);
    size_names_[s] = name;
    size_params_.push_back(name);
  }
  for (size_t k = 0; k < fn_.inputs.size(); ++k) {
    if (is_updated_input(fn_, k)) continue;  // read from its output's buffer
    const ir::ValuePtr& v = fn_.inputs[k];
    input_params_.push_back(names_.take(v->name));
    abi_inputs_.push_back(v.get());
    add_tensor(v, input_params_.back());
  }
  for (size_t i = 0; i < fn_.outputs.size(); ++i) {
    const ir::ValuePtr& v = fn_.outputs[i];
    outputs_.insert(v.get());
    output_params_.push_back(names_.take(output_name(fn_, i)));
    // A statement writes its result straight into the caller's buffer; an
    // output that is an input, a loop result or a repeat is copied at the end.
    if (memory_.output_in_place.at(i))
      add_tensor(v, output_params_.back());
    else
      output_copies_.push_back({output_params_.back(), v});
    // An output updated in place holds its initial value on entry; every
    // read of that value comes before the buffer is written (lower/updates.h).
    if (int k = fn_.updated_input(i); k >= 0) {
      const ir::Value& initial = *fn_.inputs[size_t(k)];
      TENET_ASSERT(lower::reads_precede_update(fn_, initial, *v),
                   "the initial value of output " << output_name(fn_, i)
                                                  << " is read after the output is written");
      add_tensor(fn_.inputs[size_t(k)], output_params_.back());
    }
  }
}

void FunctionEmitter::name_block(const std::vector<ir::Stmt>& body, const ir::Loop* enclosing) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      name_loop(*s.loop);
      continue;
    }
    const ir::ValuePtr& result = s.compute.result;
    if (!liveness_.live(s.compute)) continue;
    if (is_view(s)) {
      add_tensor(result, names_.take(result->name));  // points into its source (emit_view)
    } else if (tensors_.count(result.get())) {
      // An output, written in place.
    } else if (auto row = memory_.row_local.find(result.get()); row != memory_.row_local.end()) {
      add_row_local(result, names_.take(result->name), row->second);
    } else if (enclosing && memory_.in_place.count(result.get())) {
      std::string pointer = names_.take(result->name);
      const std::string buffers = names_.take_derived(pointer + "_buffers");
      in_place_buffers_[result.get()] = buffers;
      add_tensor(result, pointer);
      name_slot(memory_.slot_of.at(result.get()), buffers, count_text(*result));
    } else {
      name_temporary(result);
    }
    if (s.annotations.gemm) name_gemm(s);
    if (lowered_.convs.count(&s)) uses_conv_ = true;
  }
}

void FunctionEmitter::name_loop(const ir::Loop& loop) {
  if (!liveness_.live(loop)) return;
  loop_vars_[&loop] = names_.take(loop.var);
  for (const auto& c : loop.carried)
    if (c.param && liveness_.live(c)) add_tensor(c.param, names_.take(c.param->name));
  name_block(loop.body, &loop);
  for (const auto& c : loop.carried) {
    if (!liveness_.live(c)) continue;
    // The result's name is the state variable: the parameter of the coming
    // iteration while the loop runs, the final value after it.
    std::string name = c.result->name;
    if (outputs_.count(c.result.get()))  // the output parameter has the plain name
      name = c.param ? name + "_state" : c.next->name + "_last";
    add_tensor(c.result, names_.take(name));
    if (c.param && memory_.carry_kind.at(&c) == lower::CarryKind::Copy) {
      std::string buffers = names_.take(c.param->name + "_buffers");
      carry_buffers_[&c] = buffers;
      name_slot(memory_.carry_slot.at(&c), buffers, count_text(*c.param));
    }
  }
}

void FunctionEmitter::name_temporary(const ir::ValuePtr& v) {
  name_temporary(v, v->shape);
}

void FunctionEmitter::name_temporary(const ir::ValuePtr& v,
                                     const std::vector<ir::SizeExpr>& capacity) {
  std::string pointer = names_.take(v->name);
  add_tensor(v, pointer, capacity);
  std::string count;
  for (size_t d = 0; d < capacity.size(); ++d)
    count += (d ? " * " : "") + extent_text(capacity[d], v->name, int(d));
  name_slot(memory_.slot_of.at(v.get()), pointer, count.empty() ? "1" : count);
}

void FunctionEmitter::name_slot(size_t slot, const std::string& name, const std::string& count) {
  TENET_ASSERT(slot_names_.at(slot).empty(), "workspace slot " << name << " is named twice");
  slot_names_[slot] = name;
  slot_counts_[slot] = count;
}

void FunctionEmitter::add_tensor(const ir::ValuePtr& v, const std::string& pointer) {
  add_tensor(v, pointer, v->shape);
}

void FunctionEmitter::add_tensor(const ir::ValuePtr& v, const std::string& pointer,
                                 const std::vector<ir::SizeExpr>& storage) {
  TensorAccess t;
  t.pointer = pointer;
  const int rank = v->rank();
  std::vector<std::string> storage_dims;
  for (int d = 0; d < rank; ++d) {
    t.dims.push_back(dim_text(*v, d));
    storage_dims.push_back(extent_text(storage[size_t(d)], v->name, d));
  }
  // Storage order, outermost first; the innermost dimension has stride 1.
  std::vector<int> order = v->layout;
  if (order.empty())
    for (int d = 0; d < rank; ++d) order.push_back(d);
  t.strides.assign(size_t(rank), "1");
  std::vector<std::pair<std::string, std::string>> strides(size_t(std::max(rank - 1, 0)));
  size_t symbolic = 0;  // symbolic extents inside position p
  bool chained = false;
  for (int p = rank - 2; p >= 0; --p) {
    const size_t next = size_t(order[size_t(p + 1)]);
    symbolic += storage[next].constant() ? 0 : 1;
    std::string product;
    if (symbolic > kMaxStrideFactors) {
      // The next extent times the next stride: products of every inner
      // extent would make the declarations quadratic in the rank.
      product = storage_dims[next] + " * " + strides[size_t(p + 1)].first;
      chained = true;
    } else {
      // The product of the inner extents, constants folded: "C * 81", not "C * 9 * 9".
      int64_t constant = 1;
      for (int q = p + 1; q < rank; ++q) {
        const size_t dim = size_t(order[size_t(q)]);
        if (auto k = storage[dim].constant())
          constant *= *k;
        else
          product += (product.empty() ? "" : " * ") + storage_dims[dim];
      }
      if (constant != 1 || product.empty())
        product += (product.empty() ? "" : " * ") + std::to_string(constant);
    }
    const int dim = order[size_t(p)];
    std::string name = names_.take_derived(pointer + "_stride" + std::to_string(dim));
    t.strides[size_t(dim)] = name;
    strides[size_t(p)] = {name, product};
  }
  // Declared in order, so a chained stride comes after the one it multiplies.
  if (chained) std::reverse(strides.begin(), strides.end());
  if (!strides.empty()) strides_.push_back(std::move(strides));
  tensors_[v.get()] = std::move(t);
}

std::string FunctionEmitter::dim_text(const ir::Value& v, int d) {
  return extent_text(v.shape[size_t(d)], v.name, d);
}

std::string FunctionEmitter::extent_text(const ir::SizeExpr& size, const std::string& owner,
                                         int d) {
  if (is_simple_size(size)) return size_to_c(size, size_names_).text;
  auto it = size_local_by_key_.find(size.key());
  if (it != size_local_by_key_.end()) return it->second;
  std::string name = names_.take(owner + "_dim" + std::to_string(d));
  size_locals_.push_back({name, size_to_c(size, size_names_).text});
  size_local_by_key_[size.key()] = name;
  return name;
}

std::string FunctionEmitter::count_text(const ir::Value& v) {
  std::string product;
  for (int d = 0; d < v.rank(); ++d) product += (d ? " * " : "") + dim_text(v, d);
  return product.empty() ? "1" : product;
}

const TensorAccess& FunctionEmitter::access(const ir::ValuePtr& v) const {
  auto it = tensors_.find(v.get());
  TENET_ASSERT(it != tensors_.end(), "no storage for " << v->name);
  return it->second;
}

std::string FunctionEmitter::parameter_list(bool with_restrict) const {
  std::vector<std::string> params;
  for (const auto& s : size_params_) params.push_back("int64_t " + s);
  const std::string restrict = with_restrict ? " __restrict__ " : " ";
  for (size_t i = 0; i < abi_inputs_.size(); ++i)
    params.push_back("const " + c_type(abi_inputs_[i]->type) + "*" + restrict + input_params_[i]);
  for (size_t i = 0; i < fn_.outputs.size(); ++i)
    params.push_back(c_type(fn_.outputs[i]->type) + "*" + restrict + output_params_[i]);
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i];
  return out;
}

std::string FunctionEmitter::argument_list() const {
  std::string out;
  auto add = [&](const std::string& a) { out += (out.empty() ? "" : ", ") + a; };
  for (const auto& s : size_params_) add(s);
  for (const auto& s : input_params_) add(s);
  for (const auto& s : output_params_) add(s);
  return out;
}

std::string FunctionEmitter::size_parameter_list() const {
  std::string sizes;
  for (const auto& s : size_params_)
    sizes += (sizes.empty() ? "" : ", ") + std::string("int64_t ") + s;
  return sizes;
}

std::string FunctionEmitter::size_argument_list() const {
  std::string sizes;
  for (const auto& s : size_params_) sizes += (sizes.empty() ? "" : ", ") + s;
  return sizes;
}

std::string FunctionEmitter::declarations() const {
  Code code;
  std::string signature = fn_.name + "(";
  for (size_t i = 0; i < fn_.inputs.size(); ++i) signature += (i ? ", " : "") + fn_.inputs[i]->name;
  signature += ") -> (";
  for (size_t i = 0; i < fn_.outputs.size(); ++i)
    signature += (i ? ", " : "") + output_name(fn_, i);
  code.line("/// " + signature + ")");
  auto describe = [](const std::string& name, const ir::Value& v, const char* role) {
    std::string shape;
    for (size_t d = 0; d < v.shape.size(); ++d) shape += (d ? ", " : "") + v.shape[d].str();
    return "///   " + name + ": " + std::string(type_name(v.type)) + "[" + shape + "], " + role;
  };
  for (const ir::Value* v : abi_inputs_) code.line(describe(v->name, *v, "input"));
  for (size_t i = 0; i < fn_.outputs.size(); ++i)
    code.line(describe(output_name(fn_, i), *fn_.outputs[i],
                       fn_.updated_input(i) >= 0
                           ? "output updated in place (it holds the initial value on entry)"
                           : "output"));
  code.line("/// Buffers are dense and row-major and must not overlap.");
  const std::string sizes = size_parameter_list();
  const std::string params = parameter_list(false);
  code.line("void " + symbol_ + "(" + params + ");");
  code.line("/// Bytes of scratch memory " + symbol_ + "__with_workspace needs.");
  code.line("int64_t " + symbol_ + "__workspace_bytes(" + (sizes.empty() ? "void" : sizes) + ");");
  code.line("/// Like " + symbol_ + ", with caller-owned scratch memory (64-byte aligned).");
  code.line("void " + symbol_ + "__with_workspace(" + params + (params.empty() ? "" : ", ") +
            "void* workspace);");
  code.line("/// sizes: the size parameters in order; buffers: inputs, then outputs.");
  code.line("/// Returns 0, 1 for a negative size, 2 when scratch memory cannot be allocated.");
  code.line("int " + symbol_ + "__packed(const int64_t* sizes, void* const* buffers);");
  code.line("/// " + symbol_ + "__workspace_bytes with packed sizes; -1 for a negative size.");
  code.line("int64_t " + symbol_ + "__packed_workspace_bytes(const int64_t* sizes);");
  if (on_device()) {
    code.line("/// The packed entry points take host buffers, copied to the device and back");
    code.line("/// (the workspace is the device's); " + symbol_ +
              "__with_workspace takes device memory.");
  } else {
    code.line("/// " + symbol_ + "__with_workspace with packed arguments: allocates nothing.");
  }
  code.line("/// Returns 0, or 1 for a negative size.");
  code.line(
      "int " + symbol_ +
      "__packed_with_workspace(const int64_t* sizes, void* const* buffers, void* workspace);");
  if (on_device()) {
    code.line("/// Like " + symbol_ + "__packed_with_workspace on device memory: the buffers");
    code.line("/// and the workspace (" + symbol_ +
              "__packed_workspace_bytes, or null to allocate it)");
    code.line("/// are the device's, nothing is copied; an output that updates an input");
    code.line("/// must be given the input's buffer. Returns as the others do.");
    code.line("int " + symbol_ +
              "__packed_on_device(const int64_t* sizes, void* const* buffers, void* workspace);");
    code.line("/// After a packed entry point returned 3 (a computed index out of range;");
    code.line("/// the others throw tenet::IndexError then) or 4 (the device failed):");
    code.line("/// the message of that failure in this thread.");
    code.line("const char* " + symbol_ + "__error(void);");
  } else if (checks_indices()) {
    code.line("/// Returns 0, or 3 when a computed index was out of range (the others");
    code.line("/// throw tenet::IndexError then): the message of that failure in this thread.");
    code.line("const char* " + symbol_ + "__error(void);");
  }
  code.line("/// The ABI of " + symbol_ + ", for loaders to check.");
  code.line("const char* " + symbol_ + "__signature(void);");
  return code.str();
}

void FunctionEmitter::emit_workspace_plan(Code& code) const {
  const std::string sizes = size_parameter_list();
  if (memory_.slots.empty()) {
    code.open("extern \"C\" int64_t " + symbol_ + "__workspace_bytes(" + sizes + ")");
    code.line("return 0;  // no temporaries");
    code.close();
    return;
  }
  const std::string n = std::to_string(memory_.slots.size());
  code.line("/// The memory plan of " + symbol_ + ": each temporary's bytes and the");
  code.line("/// statements it is live across (numbered in the order they run);");
  code.line("/// temporaries that are never live together share memory (see");
  code.line("/// tenet::plan_workspace). Returns the bytes of the workspace.");
  code.open("static int64_t " + symbol_ + "__plan_workspace(" + sizes +
            (sizes.empty() ? "" : ", ") + "int64_t (&offsets)[" + n + "])");
  Code tenants(1);
  tenants.line("const tenet::WorkspaceTenant tenants[" + n + "] = {");
  for (size_t i = 0; i < memory_.slots.size(); ++i) {
    const lower::WorkspaceSlot& slot = memory_.slots[i];
    std::string bytes =
        "tenet::workspace_bytes<" + c_type(slot.type) + ">(" + slot_counts_[i] + ")";
    if (slot.copies > 1) bytes = std::to_string(slot.copies) + " * " + bytes;
    tenants.line("    {" + bytes + ", " + std::to_string(slot.live.first) + ", " +
                 std::to_string(slot.live.last) + "},  // " + slot_names_[i]);
  }
  tenants.line("};");
  tenants.line("return tenet::plan_workspace(tenants, offsets);");
  code.raw(used_size_locals(tenants.str(), 1) + tenants.str());
  code.close();
  code.line("");
  code.open("extern \"C\" int64_t " + symbol_ + "__workspace_bytes(" + sizes + ")");
  code.line("int64_t offsets[" + n + "];");
  const std::string args = size_argument_list();
  code.line("return " + symbol_ + "__plan_workspace(" + args + (args.empty() ? "" : ", ") +
            "offsets);");
  code.close();
}

std::string FunctionEmitter::used_size_locals(const std::string& text, int depth) const {
  // A local may be used by a later one only: walking backwards finds them all.
  std::vector<bool> used(size_locals_.size());
  std::unordered_set<std::string> needed;
  add_identifiers(text, needed);
  for (size_t i = size_locals_.size(); i-- > 0;) {
    used[i] = needed.count(size_locals_[i].first) != 0;
    if (used[i]) add_identifiers(size_locals_[i].second, needed);
  }
  Code locals(depth);
  for (size_t i = 0; i < size_locals_.size(); ++i)
    if (used[i])
      locals.line("const int64_t " + size_locals_[i].first + " = " + size_locals_[i].second + ";");
  return locals.str();
}

std::string FunctionEmitter::definitions() {
  Code code;
  code.comment("---- " + fn_.name + " " +
               std::string(fn_.name.size() < 67 ? 70 - fn_.name.size() : 3, '-'));
  code.line("");
  emit_workspace_plan(code);
  code.line("");
  Code host;
  emit_body(host);  // prints the kernels (lower/kernels.h) it launches into kernels_
  if (options_.kernels == CppOptions::Kernels::Emulated)
    for (const std::string& kernel : kernels_) code.raw(kernel + "\n");
  if (options_.kernels == CppOptions::Kernels::Cuda && !kernels_.empty()) {
    code.comment("The kernels (" + symbol_ +
                 "__k0...): in the unit's .cu, compiled by NVRTC for the GPU at hand.");
    for (size_t k = 0; k < kernels_.size(); ++k) {
      const std::string name = symbol_ + "__k" + std::to_string(k);
      code.line("static tenet::cuda::Kernel " + name + "(\"" + name + "\");");
    }
    code.line("");
  }
  code.raw(host.str());
  code.line("");
  emit_wrappers(code);
  code.line("");
  emit_packed_wrappers(code);
  return code.str();
}

std::string FunctionEmitter::workspace_pointers() const {
  Code setup(1);
  setup.note("Temporaries, where " + symbol_ +
             "__plan_workspace puts them; those that may share memory with others are not "
             "__restrict__.");
  setup.line("int64_t offsets[" + std::to_string(memory_.slots.size()) + "];");
  const std::string args = size_argument_list();
  setup.line(symbol_ + "__plan_workspace(" + args + (args.empty() ? "" : ", ") + "offsets);");
  for (size_t i = 0; i < memory_.slots.size(); ++i) {
    const lower::WorkspaceSlot& slot = memory_.slots[i];
    const std::string& name = slot_names_[i];
    const std::string type = c_type(slot.type);
    const std::string offset = "offsets[" + std::to_string(i) + "]";
    auto at = [&](const std::string& where) {
      return "tenet::workspace_at<" + type + ">(workspace, " + where + ")";
    };
    if (slot.copies == 1) {
      setup.line(type + (slot.exclusive ? "* __restrict__ " : "* ") + name + " = " + at(offset) +
                 ";");
    } else {
      setup.line(type + "* const " + name + "[2] = {");
      setup.line("    " + at(offset) + ",");
      setup.line("    " +
                 at(offset + " + tenet::workspace_bytes<" + type + ">(" + slot_counts_[i] + ")") +
                 "};");
    }
  }
  return setup.str();
}

void FunctionEmitter::emit_body(Code& code) {
  Code statements(1);
  Scope scope;
  scope.tensors = &tensors_;
  scope.size_names = &size_names_;
  scope.check_indices = options_.index_checks;
  if (checks_indices()) {
    statements.line(std::string(on_device() ? "tenet::device::IndexFault " : "tenet::IndexFault ") +
                    kIndexFault + ";  // the first computed index out of range");
    statements.line("");
  }
  TENET_ASSERT(lowered_.loops.built, "the function " << fn_.name
                                                     << " reached the C++ printer without its loop "
                                                        "tree (stage lower_loops)");
  if (profiled())
    print_profiled_body(statements, scope);
  else
    print_block(statements, lowered_.loops.body, scope);
  for (const auto& [param, value] : output_copies_) {
    const TensorAccess& from = access(value);
    statements.line(copy_text(from.pointer, count_text(*value), param) + "  // the output is " +
                    value->name);
  }
  const std::string body = statements.str();
  std::unordered_set<std::string> body_names;
  add_identifiers(body, body_names);

  Code strides(1);
  for (const auto& tensor : strides_) {
    // One declaration per tensor, with the strides the statements use; one
    // per stride when that does not fit on a line.
    // Walking backwards also finds the strides a used one is a multiple of.
    std::vector<std::string> used;
    for (auto it = tensor.rbegin(); it != tensor.rend(); ++it) {
      const auto& [name, expr] = *it;
      if (!body_names.count(name)) continue;
      used.push_back(name + " = " + expr);
      add_identifiers(expr, body_names);
    }
    std::reverse(used.begin(), used.end());
    std::string decl;
    for (const auto& u : used) decl += (decl.empty() ? "const int64_t " : ", ") + u;
    if (used.empty()) continue;
    if (decl.size() + 3 <= size_t(Code::kColumnLimit))
      strides.line(decl + ";");
    else
      for (const auto& u : used) strides.line("const int64_t " + u + ";");
  }
  std::string setup_text = memory_.slots.empty() ? "" : workspace_pointers();
  if (!strides.str().empty())
    setup_text = "  // Strides of the tensors, in elements.\n" + strides.str() + setup_text;
  const std::string params = parameter_list(true);
  code.open("extern \"C\" void " + symbol_ + "__with_workspace(" + params +
            (params.empty() ? "" : ", ") +
            (memory_.slots.empty() ? "void* /*workspace*/" : "void* workspace") + ")");
  const std::string locals = used_size_locals(setup_text + body, 1);
  if (!locals.empty())
    code.raw("  // Extents that are expressions of the size parameters.\n" + locals);
  code.raw(setup_text);
  if (!setup_text.empty()) code.line("");
  code.raw(body);
  code.close();
}

}  // namespace tenet::codegen::detail
