#include "io/safetensors.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/tensor_impl.h"
#include "io/limits.h"

namespace kiln::io {
namespace {

const char* code_of(DType d) {
  switch (d) {
    case DType::Bool:
      return "BOOL";
    case DType::Int32:
      return "I32";
    case DType::Int64:
      return "I64";
    case DType::Float32:
      return "F32";
    case DType::Float64:
      return "F64";
  }
  return "";
}

bool dtype_of(const std::string& code, DType* out) {
  for (DType d : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64})
    if (code == code_of(d)) {
      *out = d;
      return true;
    }
  return false;
}

[[noreturn]] void corrupt(const std::string& what) { throw DataLossError("variables.safetensors: " + what); }

}  // namespace

std::string write_safetensors(const std::map<std::string, Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "kiln"}};
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const auto& impl = detail::concrete(t);
    header[name] = {{"dtype", code_of(impl.dtype)},
                    {"shape", std::vector<int64_t>(impl.dims.begin(), impl.dims.end())},
                    {"data_offsets", {offset, offset + impl.nbytes()}}};
    offset += impl.nbytes();
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text += ' ';  // the format pads the header to 8 bytes
  std::string out(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : tensors) {
    const auto& impl = detail::concrete(t);
    out.append(static_cast<const char*>(impl.data), impl.nbytes());
  }
  return out;
}

std::map<std::string, Tensor> read_safetensors(const std::string& bytes) {
  if (bytes.size() < 8) corrupt("shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n > bytes.size() - 8 || n > kMaxJsonBytes) corrupt("header length " + std::to_string(n) + " exceeds the file");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const nlohmann::json::exception& e) {
    corrupt(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) corrupt("header is not a JSON object");
  const size_t data_begin = 8 + n;
  const size_t data_size = bytes.size() - data_begin;
  std::map<std::string, Tensor> out;
  // Tensors must tile the data region exactly: sorted by begin, no gaps, no overlaps.
  std::map<uint64_t, uint64_t> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      corrupt(where + " needs dtype, shape and data_offsets");
    const auto& jd = entry["dtype"];
    const auto& js = entry["shape"];
    const auto& jo = entry["data_offsets"];
    DType dtype;
    if (!jd.is_string() || !dtype_of(jd.get<std::string>(), &dtype)) corrupt(where + " has an unsupported dtype");
    if (!js.is_array() || js.size() > kMaxRank) corrupt(where + " has a bad shape");
    Dims dims;
    uint64_t elements = 1;
    for (const auto& d : js) {
      if (!d.is_number_unsigned()) corrupt(where + " has a bad dimension");
      const uint64_t v = d.get<uint64_t>();
      if (v > kMaxElements || (v != 0 && elements > kMaxElements / v)) corrupt(where + " is too large");
      elements *= v;
      dims.push_back(static_cast<int64_t>(v));
    }
    if (!jo.is_array() || jo.size() != 2 || !jo[0].is_number_unsigned() || !jo[1].is_number_unsigned())
      corrupt(where + " has bad data_offsets");
    const uint64_t begin = jo[0].get<uint64_t>(), end = jo[1].get<uint64_t>();
    if (begin > end || end > data_size) corrupt(where + " has data_offsets outside the data");
    if (end - begin != elements * dtype_size(dtype))
      corrupt(where + " holds " + std::to_string(end - begin) + " bytes but its dtype and shape need " +
              std::to_string(elements * dtype_size(dtype)));
    if (!ranges.emplace(begin, end).second && begin != end) corrupt(where + " overlaps another tensor");
    detail::TensorImpl* impl = detail::make_concrete(dtype, dims);
    Tensor t(impl);
    if (end > begin) std::memcpy(impl->data, bytes.data() + data_begin + begin, end - begin);
    if (dtype == DType::Bool)
      for (int64_t i = 0; i < impl->num_elements; ++i)
        if (static_cast<unsigned char*>(impl->data)[i] > 1) corrupt(where + " has a bool that is neither 0 nor 1");
    out.emplace(name, std::move(t));
  }
  uint64_t expect = 0;
  for (const auto& [b, e] : ranges) {
    if (b != expect) corrupt("tensor data overlaps or leaves gaps");
    expect = e;
  }
  if (expect != data_size) corrupt("data region has " + std::to_string(data_size - expect) + " unused bytes");
  return out;
}

}  // namespace kiln::io
