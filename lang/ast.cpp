// Replaced by the AST helpers (printer, builtin table).
namespace tenet::ast {}
