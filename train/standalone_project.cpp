// `tenet emit --train` (standalone_project.h): the model's table, the
// generated code, the embedded runtime and the templates of standalone/.
#include "train/standalone_project.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "codegen/c_text.h"
#include "codegen/cpp.h"
#include "driver/driver.h"
#include "driver/front_end.h"
#include "jit/aot.h"
#include "support/error.h"
#include "support/templates.h"
#include "train/buffer_roles.h"
#include "train/model_spec.h"
#include "train/options.h"
#include "train/trainable_model.h"

namespace tenet::train {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// The C++ of one program's table (standalone/model_info.h).
class ProgramTable {
 public:
  ProgramTable(const ModelSpec& spec, bool training) : spec_(spec), training_(training) {}

  std::string text(const ir::Function& fn, const std::string& header) {
    fn_ = &fn;
    if (fn.size_params.size() != 1 || fn.size_params[0] != spec_.batch_size)
      fail("its size parameters must be the batch size " + spec_.batch_size + " alone");
    const std::string symbol = codegen::c_symbol(fn);
    std::string out =
        "    {\n      " + quoted(fn.name) + ",\n      " + symbol +
        "__packed_with_workspace,\n      " + symbol + "__packed_workspace_bytes,\n      " +
        (header.find(symbol + "__error(") != std::string::npos ? symbol + "__error" : "nullptr") +
        ",\n      {\n";
    const ProgramRoles roles = program_roles(spec_, fn, training_);
    for (size_t k = 0; k < fn.inputs.size(); ++k) {
      const std::string& name = fn.inputs[k]->name;
      if (codegen::detail::is_updated_input(fn, k))
        fail("input '" + name + "' is updated in place");
      if (roles.inputs[k].role == Role::Other)
        fail("input '" + name + "' is not a parameter, the image, the label or a dropout mask");
      out += buffer(*fn.inputs[k], name, roles.inputs[k]);
    }
    out += "      },\n      {\n";
    bool has_loss = false, has_scores = false;
    for (size_t i = 0; i < fn.outputs.size(); ++i) {
      const BufferRole& role = roles.outputs[i];
      has_loss |= role.role == Role::Loss;
      has_scores |= role.role == Role::Scores;
      out += buffer(*fn.outputs[i], fn.output_names[i], role);
    }
    if (training_ && !has_loss) fail("it has no loss output");
    if (!training_ && !has_scores) fail("it has no scores output (@eval ... scores=NAME)");
    return out + "      },\n    }";
  }

  int64_t classes() const { return classes_; }
  /// The second dimension of `eval`'s scores (text() checked them).
  static int64_t classes_of(const ir::Function& eval, const std::string& scores) {
    for (size_t i = 0; i < eval.outputs.size(); ++i)
      if (eval.output_names[i] == scores) return *eval.outputs[i]->shape.at(1).constant();
    TENET_UNREACHABLE("no scores output '" + scores + "' in " + eval.name);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw BindError("cannot emit a standalone project for " + fn_->name + ": " + why);
  }

  std::string buffer(const ir::Value& v, const std::string& name, const BufferRole& role) {
    std::string shape;
    for (const ir::SizeExpr& d : v.shape) {
      std::string dim;
      if (std::optional<int64_t> c = d.constant()) {
        dim = std::to_string(*c);
      } else if (d.as_symbol() == spec_.batch_size) {
        dim = "kBatch";
      } else {
        fail("the shape of '" + name + "' has the dimension " + d.str() +
             ", neither a number nor the batch size");
      }
      shape += (shape.empty() ? "" : ", ") + dim;
    }
    if (role.role == Role::Loss && (v.type != ElemType::F32 || !v.shape.empty()))
      fail("the loss '" + name + "' must be a float32 scalar");
    if (role.role == Role::Scores) {
      if (v.type != ElemType::F32 || v.shape.size() != 2 || !v.shape[1].constant())
        fail("the scores '" + name + "' must be float32 [batch, classes]");
      classes_ = *v.shape[1].constant();
    }
    const std::string type = std::string("ElemType::") + type_enum_name(v.type);
    return "        {" + quoted(name) + ", Role::" + role_name(role.role) + ", " + type + ", {" +
           shape + "}, " + std::to_string(role.param) + ", " + number(role.dropout_p) + "},\n";
  }

  static const char* type_enum_name(ElemType t) {
    switch (t) {
      case ElemType::F32:
        return "F32";
      case ElemType::F64:
        return "F64";
      case ElemType::I32:
        return "I32";
      case ElemType::I64:
        return "I64";
      default:
        throw BindError(std::string("cannot emit a standalone project with a buffer of ") +
                        std::string(type_name(t)));
    }
  }

  const ModelSpec& spec_;
  bool training_;
  const ir::Function* fn_ = nullptr;
  int64_t classes_ = 0;
};

std::string model_table(const std::string& name, const ModelSpec& spec, const ir::Function& grad,
                        const ir::Function& eval, const codegen::CppUnit& code) {
  ProgramTable train(spec, true), evaluation(spec, false);
  const std::string train_text = train.text(grad, code.header);
  const std::string eval_text = evaluation.text(eval, code.header);
  std::string params;
  for (const ParamSpec& p : spec.params) {
    std::string shape;
    for (int64_t d : p.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    params +=
        "      {" + quoted(p.input) + ", {" + shape + "}, " + quoted(p.init.to_string()) + "},\n";
  }
  return "// The table of the model " + name +
         " (standalone/model_info.h), generated by Tenet; do not edit.\n"
         "#include \"" +
         code.header_name +
         "\"\n"
         "#include \"standalone/model_info.h\"\n"
         "\n"
         "namespace tenet::standalone {\n"
         "\n"
         "const ModelInfo& model_info() {\n"
         "  static const ModelInfo info = {\n"
         "    " +
         quoted(name) + ",\n    {\n" + params + "    },\n    " +
         std::to_string(evaluation.classes()) + ",\n" + train_text + ",\n" + eval_text +
         ",\n  };\n"
         "  return info;\n"
         "}\n"
         "\n"
         "}  // namespace tenet::standalone\n";
}

/// The train program's defaults: the model's @defaults, else the options table's.
std::map<std::string, std::string> train_defaults(const ModelSpec& spec, const std::string& path) {
  const auto flag = [](const TrainingOption& o) { return o.flag(); };
  HyperParams h;
  try {
    h = resolve_hyper_params({}, spec.defaults, flag);
  } catch (const OptionError& e) {
    throw BindError(path + ": " + e.what() +
                    " (the train program takes its defaults from @defaults)");
  }
  if (h.optimizer != "sgd" && h.optimizer != "adam")
    h = resolve_hyper_params({{"optimizer", "adam"}, {"lr", "0.001"}}, spec.defaults, flag);
  return {{"OPTIMIZER", h.optimizer},
          {"LR", number(h.lr)},
          {"MOMENTUM", number(h.momentum)},
          {"LR_DECAY", number(h.lr_decay)},
          {"LR_DECAY_EVERY", std::to_string(h.lr_decay_every)},
          {"LR_DECAY_STAIRCASE", h.lr_decay_staircase ? "true" : "false"},
          {"BATCH", std::to_string(h.batch)},
          {"EPOCHS", std::to_string(h.epochs)},
          {"SHIFT", std::to_string(h.shift)},
          {"SEED", std::to_string(h.seed)}};
}

}  // namespace

std::string emit_standalone_project(const std::string& model_path, const std::string& dir,
                                    const StandaloneOptions& options) {
  driver::Request front_request;
  front_request.path = model_path;
  front_request.stop_after = "check";
  const driver::Compilation front = driver::compile(front_request);
  const ModelSpec spec = parse_model_spec(*front.file, *front.checked);
  const std::string name = identifier_from_stem(model_path, "model_");

  driver::Request request = training_request(model_path, spec);
  request.emit_code = true;
  // <name>_kernels, not <name>: the project's folder is on the include path,
  // so a model named time or pthread would write a time.h that <ctime> or
  // <pthread.h> then found instead of the system's.
  request.cpp.unit_name = name + "_kernels";
  request.cpp.origin = model_path;
  request.cpp.openmp = options.openmp;
  request.cpp.index_checks = options.index_checks;
  request.target = options.target;
  const driver::Compilation compiled = driver::compile(request, front);
  const codegen::CppUnit& code = *compiled.cpp;
  const std::vector<ir::Function>& fns = compiled.optimised.functions;

  std::map<std::string, std::string> values = train_defaults(spec, model_path);
  values["MODEL"] = name;
  std::string upper;
  for (char c : name) upper += char(std::toupper(static_cast<unsigned char>(c)));
  values["MODEL_UPPER"] = upper;
  values["ORIGIN"] =
      codegen::detail::comment_text(std::filesystem::path(model_path).filename().string());
  const std::string table = model_table(name, spec, fns.at(0), fns.at(1), code);
  const int64_t classes = ProgramTable::classes_of(fns.at(1), spec.eval.scores);
  values["CLASSES"] = std::to_string(classes);
  values["CLASSES_MINUS_1"] = std::to_string(classes - 1);
  const std::string libraries = name + "_train " + name + "_train_shared";
  // A CUDA unit's GEMMs are cuBLAS'; the emulator's and the CPU's a CBLAS library's.
  values["BLAS"] = code.uses_gemm && !code.uses_cuda
                       ? jit::cmake_blas_lines(name + "_objects", libraries, name)
                       : "";
  values["CUDA"] =
      code.uses_cuda ? jit::cmake_cuda_unit_lines(name + "_kernels", upper + "_CUDA_ARCHITECTURES",
                                                  name + "_objects", libraries)
                     : "";

  // Where each template goes.
  const std::map<std::string, std::string> renamed = {
      {"standalone/c_api.cpp.in", name + "_train.cpp"},
      {"standalone/train_api.h.in", name + "_train.h"},
      {"standalone/train_main.cpp.in", "train_main.cpp"},
      {"standalone/predict_main.cpp.in", "predict_main.cpp"},
      {"standalone/CMakeLists.txt.in", "CMakeLists.txt"},
      {"standalone/README.md.in", "README.md"}};
  std::vector<jit::ProjectFile> files = {{code.header_name, code.header},
                                         {code.source_name, code.source},
                                         {name + "_model.cpp", table}};
  if (code.uses_cuda) {  // the kernels, compiled by nvcc and embedded at build time
    files.push_back({code.kernels_name, code.kernels});
    files.push_back({"embed_kernels.cmake", jit::embed_kernels_cmake()});
  }
  for (jit::ProjectFile& f : jit::runtime_header_files())
    files.push_back({"runtime/" + f.name, std::move(f.text)});
  for (const EmbeddedFile& f : standalone_runtime_files()) {
    auto it = renamed.find(f.path);
    if (it == renamed.end())
      files.push_back({f.path, f.text});
    else
      files.push_back({it->second, substitute_marks(f.text, values)});
  }
  jit::write_project(files, dir, options.overwrite);
  return name;
}

}  // namespace tenet::train
