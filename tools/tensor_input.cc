#include "tensor_input.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

namespace kiln::tools {
namespace {
using nlohmann::json;

void flatten(const json& j, size_t depth, std::vector<int64_t>& shape, std::vector<double>& values) {
  if (j.is_array()) {
    if (depth == shape.size()) shape.push_back(static_cast<int64_t>(j.size()));
    else if (shape[depth] != static_cast<int64_t>(j.size()))
      throw InvalidArgumentError("ragged JSON array: every row at depth " + std::to_string(depth) + " needs " +
                                 std::to_string(shape[depth]) + " elements");
    for (const json& e : j) flatten(e, depth + 1, shape, values);
    return;
  }
  if (depth != shape.size()) throw InvalidArgumentError("ragged JSON array: a number where a list was expected");
  if (j.is_boolean()) values.push_back(j.get<bool>() ? 1 : 0);
  else if (j.is_number()) values.push_back(j.get<double>());
  else throw InvalidArgumentError("JSON values must be numbers, booleans or arrays of them");
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
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw InvalidArgumentError(path + " is not a .npy file");
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
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([<>|=]?)([a-z])(\\d+)'")))
    throw InvalidArgumentError(path + ": no dtype in the header");
  if (m[1] == ">") throw InvalidArgumentError(path + ": big-endian arrays are not supported");
  const std::string kind = m[2], size = m[3];
  DType dtype;
  if (kind == "f" && size == "4") dtype = DType::Float32;
  else if (kind == "f" && size == "8") dtype = DType::Float64;
  else if (kind == "i" && size == "4") dtype = DType::Int32;
  else if (kind == "i" && size == "8") dtype = DType::Int64;
  else if (kind == "b" && size == "1") dtype = DType::Bool;
  else throw InvalidArgumentError(path + ": dtype " + kind + size + " is not supported");
  if (header.find("'fortran_order': True") != std::string::npos)
    throw InvalidArgumentError(path + ": Fortran-order arrays are not supported");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw InvalidArgumentError(path + ": no shape in the header");
  std::vector<int64_t> shape;
  const std::string dims = m[1];
  const std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it)
    shape.push_back(std::stoll(it->str()));
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
    case DType::Float32: return typed(0.0f);
    case DType::Float64: return typed(0.0);
    case DType::Int32: return typed(int32_t{0});
    case DType::Int64: return typed(int64_t{0});
    case DType::Bool: return typed(false);
  }
  return Tensor();
}

}  // namespace kiln::tools
