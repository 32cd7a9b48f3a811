#include "tensor_input.h"

#include <cctype>
#include <complex>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kiln::tools {
namespace {
using nlohmann::json;

void flatten(const json& j, size_t depth, std::vector<int64_t>& shape, std::vector<double>& values) {
  if (j.is_array()) {
    if (depth == shape.size())
      shape.push_back(static_cast<int64_t>(j.size()));
    else if (shape[depth] != static_cast<int64_t>(j.size()))
      throw InvalidArgumentError("ragged JSON array: every row at depth " + std::to_string(depth) + " needs " +
                                 std::to_string(shape[depth]) + " elements");
    for (const json& e : j) flatten(e, depth + 1, shape, values);
    return;
  }
  if (depth != shape.size()) throw InvalidArgumentError("ragged JSON array: a number where a list was expected");
  if (j.is_boolean())
    values.push_back(j.get<bool>() ? 1 : 0);
  else if (j.is_number())
    values.push_back(j.get<double>());
  else
    throw InvalidArgumentError("JSON values must be numbers, booleans or arrays of them");
}

}  // namespace

Tensor tensor_from_json(const std::string& text, DType dtype) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InvalidArgumentError("not a JSON value: " + text);
  }
  std::vector<int64_t> shape;
  std::vector<double> values;
  flatten(j, 0, shape, values);
  if (values.empty() && !shape.empty() && shape.back() != 0) throw InvalidArgumentError("ragged JSON array");
  return cast(constant<double>(values, shape), dtype);
}

Tensor tensor_from_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NotFoundError("cannot open " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw InvalidArgumentError(path + " is not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) throw InvalidArgumentError(path + " is truncated");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  }
  if (offset + header_len > bytes.size()) throw InvalidArgumentError(path + " is truncated");
  const std::string header = bytes.substr(offset, header_len);
  // The header is a Python dict literal; read the two values we need without a parser.
  auto value_after = [&](const std::string& key, char open, char close) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t b = header.find(open, k + key.size() + 2);
    size_t e = b == std::string::npos ? b : header.find(close, b + 1);
    if (e == std::string::npos) return "";
    return header.substr(b + 1, e - b - 1);
  };
  std::string descr = value_after("descr", '\'', '\'');  // "<f4"
  if (descr.size() < 2) throw InvalidArgumentError(path + ": no dtype in the header");
  if (descr[0] == '>') throw InvalidArgumentError(path + ": big-endian arrays are not supported");
  if (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') descr = descr.substr(1);
  DType dtype;
  if (descr == "f4")
    dtype = DType::Float32;
  else if (descr == "f8")
    dtype = DType::Float64;
  else if (descr == "i4")
    dtype = DType::Int32;
  else if (descr == "i8")
    dtype = DType::Int64;
  else if (descr == "b1")
    dtype = DType::Bool;
  else
    throw InvalidArgumentError(path + ": dtype " + descr + " is not supported");
  if (header.find("'fortran_order': True") != std::string::npos)
    throw InvalidArgumentError(path + ": Fortran-order arrays are not supported");
  if (header.find("'shape'") == std::string::npos) throw InvalidArgumentError(path + ": no shape in the header");
  const std::string dims = value_after("shape", '(', ')');  // "2, 3," or ""
  std::vector<int64_t> shape;
  for (size_t i = 0; i < dims.size();) {
    if (!std::isdigit(static_cast<unsigned char>(dims[i]))) {
      if (dims[i] != ',' && dims[i] != ' ') throw InvalidArgumentError(path + ": bad shape (" + dims + ")");
      ++i;
      continue;
    }
    size_t j = i;
    while (j < dims.size() && std::isdigit(static_cast<unsigned char>(dims[j]))) ++j;
    if (j - i > 12) throw InvalidArgumentError(path + ": dimension too large");
    shape.push_back(std::stoll(dims.substr(i, j - i)));
    i = j;
  }
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  const char* data = bytes.data() + offset + header_len;
  if (bytes.size() - offset - header_len != count * dtype_size(dtype))
    throw InvalidArgumentError(path + ": the data size does not match the shape");
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> v(count);
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < count; ++i) v[i] = data[i] != 0;
    } else {
      std::memcpy(v.data(), data, count * sizeof(T));
    }
    return constant<T>(std::move(v), shape);
  };
  switch (dtype) {
    case DType::Float32:
      return typed(0.0f);
    case DType::Float64:
      return typed(0.0);
    case DType::Int32:
      return typed(int32_t{0});
    case DType::Int64:
      return typed(int64_t{0});
    case DType::Bool:
      return typed(false);
    case DType::UInt8:
      return typed(uint8_t{0});
    case DType::Int8:
      return typed(int8_t{0});
    case DType::Int16:
      return typed(int16_t{0});
    case DType::UInt16:
      return typed(uint16_t{0});
    case DType::UInt32:
      return typed(uint32_t{0});
    case DType::UInt64:
      return typed(uint64_t{0});
    case DType::Float16:
      return typed(float16{});
    case DType::BFloat16:
      return typed(bfloat16{});
    case DType::Complex64:
      return typed(std::complex<float>{});
    case DType::Complex128:
      return typed(std::complex<double>{});
    case DType::Variant:
    case DType::String:
      break;
  }
  throw InvalidArgumentError(std::string("a ") + std::string(dtype_name(dtype)) +
                             " input cannot be given as .npy data");
}

}  // namespace kiln::tools
