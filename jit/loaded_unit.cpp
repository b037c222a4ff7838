#include "jit/loaded_unit.h"

#include "codegen/cpp.h"
#include "support/error.h"

namespace tenet::jit {

namespace {

template <typename T>
T lookup(const LoadedUnit& unit, const std::string& symbol) {
  return reinterpret_cast<T>(unit.symbol(symbol));
}

}  // namespace

std::string LoadedUnit::abi_problem(const ir::Function& fn) const {
  const std::string symbol = codegen::c_symbol(fn);
  for (const char* suffix :
       {"__signature", "__packed", "__packed_workspace_bytes", "__packed_with_workspace"})
    if (!this->symbol(symbol + suffix)) return "the symbol " + symbol + suffix + " is missing";
  using Signature = const char* (*)();
  const std::string signature = lookup<Signature>(*this, symbol + "__signature")();
  if (signature != codegen::abi_signature(fn))
    return "it has the ABI '" + signature + "', expected '" + codegen::abi_signature(fn) + "'";
  return "";
}

PackedEntryPoints LoadedUnit::entry_points(const ir::Function& fn) const {
  const std::string symbol = codegen::c_symbol(fn);
  PackedEntryPoints e;
  e.packed = lookup<PackedEntryPoints::Packed>(*this, symbol + "__packed");
  e.workspace_bytes =
      lookup<PackedEntryPoints::WorkspaceBytes>(*this, symbol + "__packed_workspace_bytes");
  e.with_workspace =
      lookup<PackedEntryPoints::WithWorkspace>(*this, symbol + "__packed_with_workspace");
  e.error = lookup<PackedEntryPoints::ErrorMessage>(*this, symbol + "__error");
  e.on_device = lookup<PackedEntryPoints::OnDevice>(*this, symbol + "__packed_on_device");
  TENET_ASSERT(e.packed && e.workspace_bytes && e.with_workspace,
               files_.artefact_path << " lacks the entry points of " << fn.name);
  return e;
}

}  // namespace tenet::jit
