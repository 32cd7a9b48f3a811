#include "io/manifest.h"

#include <nlohmann/json.hpp>

#include "io/limits.h"
#include "kiln/errors.h"

namespace kiln::io {
namespace {
using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw DataLossError("manifest.json: " + what); }

json spec_json(const TensorSpec& s) {
  json shape = nullptr;
  if (s.shape.rank() >= 0) {
    shape = json::array();
    for (int64_t d : s.shape.dims()) shape.push_back(d < 0 ? json(nullptr) : json(d));
  }
  return {{"name", s.name}, {"dtype", std::string(dtype_name(s.dtype))}, {"shape", shape}};
}

TensorSpec spec_from(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("name") || !j.contains("dtype") || !j.contains("shape") || !j["name"].is_string() ||
      !j["dtype"].is_string())
    bad(where + " needs name, dtype and shape");
  TensorSpec s;
  s.name = j["name"].get<std::string>();
  bool found = false;
  for (DType d : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64})
    if (j["dtype"].get<std::string>() == dtype_name(d)) {
      s.dtype = d;
      found = true;
    }
  if (!found) bad(where + " has an unknown dtype");
  const json& shape = j["shape"];
  if (shape.is_null()) {
    s.shape = TensorShape::unknown();
  } else {
    if (!shape.is_array() || shape.size() > kMaxRank) bad(where + " has a bad shape");
    std::vector<int64_t> dims;
    for (const json& d : shape) {
      if (d.is_null())
        dims.push_back(-1);
      else if (d.is_number_unsigned() && d.get<uint64_t>() <= kMaxElements)
        dims.push_back(d.get<int64_t>());
      else
        bad(where + " has a bad dimension");
    }
    s.shape = TensorShape(dims);
  }
  return s;
}

}  // namespace

std::string write_manifest(const Manifest& m) {
  json sigs = json::object();
  for (const auto& [name, e] : m.signatures) {
    json ins = json::array(), outs = json::array();
    for (const auto& s : e.inputs) ins.push_back(spec_json(s));
    for (const auto& s : e.outputs) outs.push_back(spec_json(s));
    sigs[name] = {{"function", e.function}, {"inputs", ins}, {"outputs", outs}};
  }
  json files = json::object();
  for (const auto& [name, f] : m.files) files[name] = {{"bytes", f.bytes}, {"sha256", f.sha256}};
  json j = {{"format", kManifestFormat},
            {"format_version", kManifestVersion},
            {"signatures", sigs},
            {"variables", m.variables},
            {"files", files}};
  return j.dump(2) + "\n";
}

Manifest parse_manifest(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    bad(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", json()) != kManifestFormat) bad("not a kiln saved model manifest");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer()) bad("format_version is missing");
  if (j["format_version"].get<int64_t>() != kManifestVersion)
    bad("format_version " + j["format_version"].dump() + " is not supported (this kiln reads " +
        std::to_string(kManifestVersion) + ")");
  Manifest m;
  if (!j.contains("signatures") || !j["signatures"].is_object() || j["signatures"].empty()) bad("no signatures");
  for (const auto& [name, e] : j["signatures"].items()) {
    const std::string where = "signature '" + name + "'";
    if (!e.is_object() || !e.contains("function") || !e["function"].is_string() || !e.contains("inputs") ||
        !e["inputs"].is_array() || !e.contains("outputs") || !e["outputs"].is_array())
      bad(where + " needs function, inputs and outputs");
    SignatureEntry s;
    s.function = e["function"].get<std::string>();
    for (const json& in : e["inputs"]) s.inputs.push_back(spec_from(in, where + " input"));
    for (const json& out : e["outputs"]) s.outputs.push_back(spec_from(out, where + " output"));
    m.signatures.emplace(name, std::move(s));
  }
  if (j.contains("variables")) {
    if (!j["variables"].is_array()) bad("variables is not a list");
    for (const json& v : j["variables"]) {
      if (!v.is_string()) bad("a variable name is not a string");
      m.variables.push_back(v.get<std::string>());
    }
  }
  if (!j.contains("files") || !j["files"].is_object()) bad("files is missing");
  for (const auto& [name, f] : j["files"].items()) {
    if (!f.is_object() || !f.contains("bytes") || !f["bytes"].is_number_unsigned() || !f.contains("sha256") ||
        !f["sha256"].is_string())
      bad("file '" + name + "' needs bytes and sha256");
    m.files[name] = FileEntry{f["bytes"].get<uint64_t>(), f["sha256"].get<std::string>()};
  }
  return m;
}

}  // namespace kiln::io
