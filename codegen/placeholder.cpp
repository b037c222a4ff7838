// Replaced by the C++ backend.
namespace tenet::codegen {}
