// save() and load(): a directory with graph.pb (a FunctionDef per signature and the
// functions they reach), variables.safetensors and manifest.json.
#include "io/saved_model.h"

#include <cctype>

#include "graph.pb.h"
#include "graph/graph_def.h"
#include "io/files.h"
#include "io/graph_import.h"
#include "io/limits.h"
#include "io/manifest.h"
#include "io/proto_values.h"
#include "io/safetensors.h"
#include "ops/variable_state.h"

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

bool valid_signature_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

// A copy of the traced graph whose captured values are Consts, so it stands alone.
std::unique_ptr<graph::Graph> standalone_graph(const detail::ConcreteImpl& cf) {
  auto g = cf.graph->clone();
  const size_t num_args = cf.inputs.size();
  std::map<std::pair<const graph::Node*, int>, graph::Output> replace;
  for (size_t k = 0; k < cf.captures.size(); ++k) {
    graph::Node* ph = g->inputs[num_args + k];
    graph::Node* c = g->add_const(cf.captures[k], ph->name + "_value");
    replace[{ph, 0}] = graph::Output{c, 0};
  }
  g->replace_uses(replace);
  g->inputs.resize(num_args);
  g->compact_order(true);
  return g;
}

}  // namespace

void save(const std::string& dir, std::map<std::string, ConcreteFunction> signatures) {
  if (signatures.empty()) throw InvalidArgumentError("save: no signatures to save");
  tensorflow::GraphDef def;
  io::Manifest manifest;
  std::map<const Resource*, std::string> var_names;
  std::map<std::string, Tensor> var_values;
  graph::ExportOptions options;
  options.variable_name = [&](const Resource* r) {
    auto it = var_names.find(r);
    if (it != var_names.end()) return it->second;
    const std::string base = r->resource_name().empty() ? "Variable" : r->resource_name();
    std::string name = base;
    for (int k = 1; var_values.count(name); ++k) name = base + "_" + std::to_string(k);
    var_names[r] = name;
    var_values[name] = static_cast<const ops::VariableState*>(r)->read();
    manifest.variables.push_back(name);
    return name;
  };
  int k = 0;
  for (const auto& [sig, cf] : signatures) {
    if (!valid_signature_name(sig))
      throw InvalidArgumentError("save: signature name '" + sig + "' must be 1-128 letters, digits, '_', '-' or '.'");
    if (!cf.impl()) throw InvalidArgumentError("save: signature '" + sig + "' is an empty ConcreteFunction");
    const detail::ConcreteImpl& impl = *cf.impl();
    auto g = standalone_graph(impl);
    io::SignatureEntry entry;
    entry.function = "__inference_" + sig + "_" + std::to_string(k);
    options.function_prefix = std::string(1, 's').append(std::to_string(k)).append("_");
    graph::write_function_library(*g, entry.function, &def, options);
    for (size_t i = 0; i < g->inputs.size(); ++i)
      entry.inputs.push_back(TensorSpec{impl.inputs[i].shape, impl.inputs[i].dtype, g->inputs[i]->name});
    for (size_t i = 0; i < impl.outputs.size(); ++i)
      entry.outputs.push_back(TensorSpec{impl.outputs[i].shape, impl.outputs[i].dtype, "output_" + std::to_string(i)});
    manifest.signatures[sig] = std::move(entry);
    ++k;
  }
  std::string graph_bytes;
  def.SerializeToString(&graph_bytes);
  const std::string var_bytes = io::write_safetensors(var_values);
  manifest.files[io::kGraphFile] = io::FileEntry{graph_bytes.size(), io::sha256_hex(graph_bytes)};
  manifest.files[io::kVariablesFile] = io::FileEntry{var_bytes.size(), io::sha256_hex(var_bytes)};
  io::AtomicDirWriter out(dir);
  out.write(io::kGraphFile, graph_bytes);
  out.write(io::kVariablesFile, var_bytes);
  out.write(io::kManifestFile, io::write_manifest(manifest));  // last: it vouches for the others
  out.commit();
}

void save(const std::string& dir, const ConcreteFunction& function, std::string signature) {
  save(dir, std::map<std::string, ConcreteFunction>{{std::move(signature), function}});
}

namespace io {

LoadedModel load_from_files(const std::map<std::string, std::string>& files, bool verify_checksums,
                            const LoadOptions& options) {
  auto file = [&](const char* name) -> const std::string& {
    auto it = files.find(name);
    if (it == files.end()) throw NotFoundError(std::string("the saved model has no ") + name);
    return it->second;
  };
  const Manifest manifest = parse_manifest(file(kManifestFile));
  for (const char* name : {kGraphFile, kVariablesFile}) {
    auto entry = manifest.files.find(name);
    if (entry == manifest.files.end()) throw DataLossError(std::string("manifest.json does not list ") + name);
    if (!verify_checksums) continue;
    const std::string& bytes = file(name);
    if (bytes.size() != entry->second.bytes || sha256_hex(bytes) != entry->second.sha256)
      throw DataLossError(std::string("checksum mismatch: ") + name + " is not the file manifest.json describes (" +
                          std::to_string(bytes.size()) + " bytes, expected " + std::to_string(entry->second.bytes) +
                          ")");
  }
  tensorflow::GraphDef def;
  if (!def.ParseFromString(file(kGraphFile))) throw DataLossError("graph.pb is not a valid GraphDef");
  auto model = std::make_shared<detail::LoadedModelImpl>();
  VariableMap variables;
  NodeBudget budget{.max_nodes = options.max_nodes};
  for (auto& [name, value] : read_safetensors(file(kVariablesFile)))
    variables[name] = std::make_shared<ops::VariableState>(value, name);
  for (const auto& [sig, entry] : manifest.signatures) {
    const std::string where = "signature '" + sig + "'";
    std::vector<ops::PartialShape> shapes;
    std::vector<DType> dtypes;
    for (const TensorSpec& s : entry.inputs) dtypes.push_back(s.dtype);
    for (const TensorSpec& s : entry.inputs)
      shapes.push_back(s.shape.rank() < 0 ? ops::PartialShape{{}, true}
                                          : ops::PartialShape{Dims(s.shape.dims()), false});
    auto cf = std::make_shared<detail::ConcreteImpl>();
    cf->name = sig;
    cf->graph = import_function(def.library(), entry.function, dtypes, shapes, variables, budget);
    const graph::Graph& g = *cf->graph;
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      const TensorSpec& s = entry.inputs[i];
      if (g.inputs[i]->name != s.name || g.inputs[i]->out_dtypes[0] != s.dtype)
        throw InvalidArgumentError(where + ": input " + std::to_string(i) + " of the manifest (" + s.name +
                                   ") does not match the function's argument " + g.inputs[i]->name);
      cf->inputs.push_back(s);
      detail::ArgEntry arg;
      arg.name = s.name;
      arg.dtype = s.dtype;
      arg.shape = s.shape;
      cf->signature.push_back(arg);
    }
    if (g.outputs.size() != entry.outputs.size())
      throw InvalidArgumentError(where + ": the manifest lists " + std::to_string(entry.outputs.size()) +
                                 " outputs, the function returns " + std::to_string(g.outputs.size()));
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const graph::Output& o = g.outputs[i];
      if (o.node->out_dtypes[o.index] != entry.outputs[i].dtype)
        throw InvalidArgumentError(where + ": output " + std::to_string(i) + " dtype differs from the manifest");
      cf->outputs.push_back(
          TensorSpec{full_shape(o.node->out_shapes[o.index]), o.node->out_dtypes[o.index], entry.outputs[i].name});
    }
    cf->compile(config::optimizer_options());
    model->signatures.emplace(sig, std::move(cf));
  }
  model->variables = std::move(variables);
  return LoadedModel(model);
}

}  // namespace io

LoadedModel load(const std::string& dir, const LoadOptions& options) {
  if (io::is_tf_saved_model(dir)) return io::load_tf_saved_model(dir, options);
  std::map<std::string, std::string> files;
  files[io::kManifestFile] = io::read_file(dir + "/" + io::kManifestFile, io::kMaxJsonBytes);
  for (const char* name : {io::kGraphFile, io::kVariablesFile})
    files[name] = io::read_file(dir + "/" + name, io::kMaxFileBytes);
  return io::load_from_files(files, true, options);
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
  return ConcreteFunction(it->second)(inputs);
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

}  // namespace kiln
