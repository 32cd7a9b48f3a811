// The SavedModel API: load() and the LoadedModel it returns, inspect(), save(),
// export_tfjs(). The format: TensorFlow's SavedModel, read by io/tf_saved_model.cc, written
// by io/tf_saved_model_writer.cc, converted for TensorFlow.js by io/tfjs_export.cc.
#include "io/saved_model.h"

#include <algorithm>
#include <filesystem>

#include "api/variable_handle.h"

namespace kiln {
namespace {

std::string spec_text(const TensorSpec& s) { return std::string(dtype_name(s.dtype)) + " " + s.shape.str(); }

std::string listing(const detail::LoadedModelImpl& m) {
  std::string out;
  for (const auto& [name, cf] : m.signatures) {
    out += "  " + name + "(";
    for (size_t i = 0; i < cf->inputs.size(); ++i)
      out += (i ? ", " : "") + cf->inputs[i].name + ": " + spec_text(cf->inputs[i]);
    out += ") -> (";
    for (size_t i = 0; i < cf->outputs.size(); ++i) out += (i ? ", " : "") + spec_text(cf->outputs[i]);
    out += ")\n";
  }
  return out;
}

}  // namespace

void save(const std::string& dir, const ConcreteFunction& function, std::string signature) {
  io::write_saved_model(dir, {{std::move(signature), function}}, {});
}
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures) {
  io::write_saved_model(dir, std::move(signatures), {});
}
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
          const std::map<std::string, std::vector<std::string>>& output_names) {
  io::write_saved_model(dir, std::move(signatures), output_names);
}
void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
          const std::map<std::string, std::vector<std::string>>& output_names, const SavedObjects& objects) {
  io::ObjectsToSave resolved{.graph = objects.graph, .variables = {}, .functions = objects.functions};
  for (const Variable& v : objects.variables)
    resolved.variables.push_back(v.handle() ? v.handle()->state.get() : nullptr);
  io::write_saved_model(dir, std::move(signatures), output_names, &resolved);
}

void export_tfjs(const std::string& saved_dir, const std::string& out_dir, const std::string& signature) {
  const LoadedModel model = load(saved_dir);
  const std::vector<std::string> names = model.signatures();
  const std::string sig = !signature.empty() ? signature : names.size() == 1 ? names[0] : "serving_default";
  io::write_tfjs(*model.signature(sig).impl(), model.variables(), out_dir);
}

LoadedModel load(const std::string& dir, const LoadOptions& options) {
  if (io::is_tf_saved_model(dir)) return io::load_tf_saved_model(dir, options);
  std::error_code ec;
  if (std::filesystem::exists(dir + "/manifest.json", ec))
    throw UnimplementedError(dir +
                             " is in kiln's first format (manifest.json, graph.pb, variables.safetensors), which "
                             "kiln no longer reads: save it again with kiln::save, which writes TensorFlow's format");
  throw NotFoundError("cannot open " + dir + "/saved_model.pb: not a SavedModel directory");
}

SavedModelInfo inspect(const std::string& dir) {
  if (!io::is_tf_saved_model(dir)) (void)load(dir);  // throws the error load gives
  return io::inspect_tf_saved_model(dir);
}

std::vector<Tensor> LoadedModel::call(const std::string& signature, std::vector<Tensor> inputs) const {
  if (!impl_) throw FailedPreconditionError("call on an empty LoadedModel");
  auto it = impl_->signatures.find(signature);
  if (it == impl_->signatures.end())
    throw InvalidArgumentError(
        "Could not find matching function to call loaded from the SavedModel: there is no "
        "signature '" +
        signature + "'. Signatures that exist:\n" + listing(*impl_));
  const detail::ConcreteImpl& cf = *it->second;
  std::string mismatch;
  if (inputs.size() != cf.inputs.size()) {
    mismatch = "got " + std::to_string(inputs.size()) + " inputs, expected " + std::to_string(cf.inputs.size());
  } else {
    for (size_t i = 0; i < inputs.size() && mismatch.empty(); ++i) {
      const TensorSpec& s = cf.inputs[i];
      if (!inputs[i].defined())
        mismatch = "input " + s.name + " is an empty Tensor";
      else if (inputs[i].dtype() != s.dtype || !s.shape.is_compatible_with(inputs[i].shape()))
        mismatch = "input " + s.name + " expected " + spec_text(s) + ", got " +
                   std::string(dtype_name(inputs[i].dtype())) + " " + inputs[i].shape().str();
    }
  }
  if (!mismatch.empty())
    throw InvalidArgumentError("Could not find matching function to call loaded from the SavedModel for signature '" +
                               signature + "': " + mismatch + ". Signatures that exist:\n" + listing(*impl_));
  std::optional<RunLimitsScope> limits;
  if (impl_->has_limits()) limits.emplace(impl_->limits);
  return ConcreteFunction(it->second)(inputs);
}

std::map<std::string, Tensor> LoadedModel::call(const std::string& signature,
                                                const std::map<std::string, Tensor>& inputs) const {
  const ConcreteFunction cf = this->signature(signature);
  const auto specs = cf.input_specs();
  std::string names;
  for (const TensorSpec& s : specs) names += (names.empty() ? "" : ", ") + s.name;
  std::vector<Tensor> positional;
  for (const TensorSpec& s : specs) {
    auto it = inputs.find(s.name);
    if (it == inputs.end())
      throw InvalidArgumentError("signature '" + signature + "' needs input '" + s.name + "' (its inputs: " + names +
                                 ")");
    positional.push_back(it->second);
  }
  for (const auto& entry : inputs) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture a structured binding
    if (std::none_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; }))
      throw InvalidArgumentError("signature '" + signature + "' has no input '" + name + "' (its inputs: " + names +
                                 ")");
  }
  const std::vector<Tensor> outputs = call(signature, std::move(positional));
  const auto out_specs = cf.output_specs();
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < outputs.size(); ++i) named[out_specs[i].name] = outputs[i];
  return named;
}

std::vector<std::string> LoadedModel::signatures() const {
  std::vector<std::string> out;
  if (impl_)
    for (const auto& [name, cf] : impl_->signatures) out.push_back(name);
  return out;
}

ConcreteFunction LoadedModel::signature(const std::string& name) const {
  if (!impl_ || !impl_->signatures.count(name))
    throw InvalidArgumentError("the saved model has no signature '" + name + "'");
  return ConcreteFunction(impl_->signatures.at(name));
}

std::map<std::string, Tensor> LoadedModel::variables() const {
  std::map<std::string, Tensor> out;
  if (impl_)
    for (const auto& [name, v] : impl_->variables) out[name] = v->read();
  return out;
}

std::string LoadedModel::objects() const { return impl_ ? impl_->objects : "{\"nodes\": []}"; }

ConcreteFunction LoadedModel::function(const std::string& name) const {
  if (impl_) {
    if (auto e = impl_->function_errors.find(name); e != impl_->function_errors.end())
      throw UnimplementedError(e->second);
    if (auto f = impl_->functions.find(name); f != impl_->functions.end()) return ConcreteFunction(f->second);
  }
  throw InvalidArgumentError("the saved model has no function '" + name + "'");
}

Variable LoadedModel::variable(const std::string& name) const {
  if (!impl_ || !impl_->variables.count(name))
    throw InvalidArgumentError("the saved model has no variable '" + name + "'");
  return Variable(std::make_shared<detail::VariableHandle>(detail::VariableHandle{.state = impl_->variables.at(name)}));
}

}  // namespace kiln
