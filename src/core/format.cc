#include "core/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/object_value.h"

namespace kiln::detail {
namespace {

constexpr int64_t kSummarizeThreshold = 1000;  // numpy's threshold
constexpr int64_t kEdgeItems = 3;              // numpy's edgeitems

double element_as_double(const TensorImpl& t, int64_t i) {
  switch (t.dtype) {
    case DType::Float32:
      return t.as<float>()[i];
    case DType::Float64:
      return t.as<double>()[i];
    case DType::Float16:
      return static_cast<float>(t.as<float16>()[i]);
    case DType::BFloat16:
      return static_cast<float>(t.as<bfloat16>()[i]);
    default:
      return 0;
  }
}

bool round_trips(const char* s, double v, DType dtype) {
  if (dtype == DType::Float32) return std::strtof(s, nullptr) == static_cast<float>(v);
  if (dtype == DType::Float16) return static_cast<float>(float16(std::strtof(s, nullptr))) == static_cast<float>(v);
  if (dtype == DType::BFloat16) return static_cast<float>(bfloat16(std::strtof(s, nullptr))) == static_cast<float>(v);
  return std::strtod(s, nullptr) == v;
}

// Fixed notation with the fewest fractional digits (at most 8) that read back as v; a value
// that needs more is rounded to 8 and loses its trailing zeros (numpy's "maxprec": 0.3, not
// 0.30000000, for 0.1 + 0.2).
std::string fixed_text(double v, DType dtype) {
  char buf[64];
  for (int p = 0; p <= 8; ++p) {
    std::snprintf(buf, sizeof buf, "%.*f", p, v);
    if (round_trips(buf, v, dtype) || p == 8) {
      std::string s = buf;
      if (p == 8) s.erase(s.find_last_not_of('0') + 1);
      if (p == 0) s += ".";
      return s;
    }
  }
  return buf;
}

// A 0-d float as Python's repr (and numpy's scalar str) writes it: the shortest digits that
// read back as v, fixed between 1e-4 and 1e16 ("0.30000000000000004", "12.0"), else
// scientific ("1e-05", "1.5e+20").
std::string shortest_text(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  int digits = 1;
  for (; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (round_trips(buf, v, dtype)) break;
  }
  const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent < -4 || exponent >= 16) {
    std::string s = buf;
    const size_t e = s.find('e');
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    if (ex.size() < 3) ex.insert(1, 2 - (ex.size() - 1), '0');  // e-5 -> e-05, as Python
    return mant + "e" + ex;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::max(digits - 1 - exponent, 1), v);
  return buf;
}

// Scientific notation, numpy style: "1.e-05", "1.5e+20".
std::string scientific_text(double v, DType dtype) {
  char buf[64];
  const int max_p = dtype == DType::Float32 ? 8 : 16;
  for (int p = 0; p <= max_p; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    if (round_trips(buf, v, dtype) || p == max_p) break;
  }
  std::string s = buf;
  const size_t e = s.find('e');
  std::string mant = s.substr(0, e), ex = s.substr(e);
  if (mant.find('.') == std::string::npos) mant += ".";
  return mant + ex;
}

std::string float_text(double v, DType dtype, bool scientific) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return scientific ? scientific_text(v, dtype) : fixed_text(v, dtype);
}

std::string int_text(const TensorImpl& t, int64_t i) {
  switch (t.dtype) {
    case DType::Int32:
      return std::to_string(t.as<int32_t>()[i]);
    case DType::Int64:
      return std::to_string(t.as<int64_t>()[i]);
    case DType::Bool:
      return t.as<bool>()[i] ? "True" : "False";
    case DType::UInt8:
      return std::to_string(t.as<uint8_t>()[i]);
    case DType::Int8:
      return std::to_string(t.as<int8_t>()[i]);
    case DType::Int16:
      return std::to_string(t.as<int16_t>()[i]);
    case DType::UInt16:
      return std::to_string(t.as<uint16_t>()[i]);
    case DType::UInt32:
      return std::to_string(t.as<uint32_t>()[i]);
    case DType::UInt64:
      return std::to_string(t.as<uint64_t>()[i]);
    case DType::String:
      return bytes_repr(string_of(t.as<ObjectValue*>()[i]));
    default:
      return "";
  }
}

// numpy's text of one complex element: "1.+2.j", "-3.-0.5j" (each part as a float32 or
// float64 alone would print).
std::string complex_text(const TensorImpl& t, int64_t i) {
  const DType part = t.dtype == DType::Complex64 ? DType::Float32 : DType::Float64;
  const double re = t.dtype == DType::Complex64 ? t.as<complex64>()[i].real() : t.as<complex128>()[i].real();
  const double im = t.dtype == DType::Complex64 ? t.as<complex64>()[i].imag() : t.as<complex128>()[i].imag();
  const std::string imag = float_text(std::fabs(im), part, false);
  return float_text(re, part, false) + (std::signbit(im) ? "-" : "+") + imag + "j";
}

// Row-major strides of t's dims.
std::vector<int64_t> strides_of(const TensorImpl& t) {
  std::vector<int64_t> s(t.dims.size(), 1);
  for (int i = static_cast<int>(t.dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * t.dims[i + 1];
  return s;
}

// The indices shown along one axis: all, or the first and last kEdgeItems with -1 for "...".
std::vector<int64_t> shown_indices(int64_t n, bool summarize, int64_t edge) {
  std::vector<int64_t> idx;
  if (summarize && n > 2 * edge) {
    for (int64_t i = 0; i < edge; ++i) idx.push_back(i);
    idx.push_back(-1);
    for (int64_t i = n - edge; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

struct Printer {
  const TensorImpl& t;
  std::vector<int64_t> strides;
  bool summarize;
  int64_t edge;
  std::vector<std::string> texts;  // element texts by flat index, only for shown elements
  std::vector<int64_t> shown;      // flat indices shown
  size_t width = 0;
  const char* ellipsis;

  void collect(size_t axis, int64_t offset) {
    if (axis == t.dims.size()) {
      shown.push_back(offset);
      return;
    }
    for (int64_t i : shown_indices(t.dims[axis], summarize, edge))
      if (i >= 0) collect(axis + 1, offset + i * strides[axis]);
  }

  void emit(size_t axis, int64_t offset, std::string& out, const std::vector<std::string>& text_of_shown,
            size_t& k) const {
    if (axis == t.dims.size()) {
      out += text_of_shown[k++];
      return;
    }
    out += "[";
    const size_t rank = t.dims.size();
    bool first = true;
    for (int64_t i : shown_indices(t.dims[axis], summarize, edge)) {
      if (!first) {
        if (axis + 1 == rank)
          out += " ";
        else
          out += std::string(rank - axis - 1, '\n') + std::string(axis + 1, ' ');
      }
      first = false;
      if (i < 0) {
        out += ellipsis;
        continue;
      }
      emit(axis + 1, offset + i * strides[axis], out, text_of_shown, k);
    }
    out += "]";
  }
};

}  // namespace

std::string bytes_repr(std::string_view s) {
  std::string r = "b'";
  for (unsigned char ch : s) {
    if (ch == '\\' || ch == '\'') {
      r += '\\';
      r += static_cast<char>(ch);
    } else if (ch == '\n') {
      r += "\\n";
    } else if (ch == '\t') {
      r += "\\t";
    } else if (ch == '\r') {
      r += "\\r";
    } else if (ch < 0x20 || ch >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      r += buf;
    } else {
      r += static_cast<char>(ch);
    }
  }
  return r + "'";
}

std::string format_scalar(const TensorImpl& t, int64_t index) {
  if (is_floating(t.dtype)) {
    const double v = element_as_double(t, index);
    const double a = std::fabs(v);
    return float_text(v, t.dtype, a != 0 && (a >= 1e16 || a < 1e-4));
  }
  return int_text(t, index);
}

std::string format_values(const TensorImpl& t) {
  if (t.dims.empty() && is_floating(t.dtype)) return shortest_text(element_as_double(t, 0), t.dtype);
  Printer p{t, strides_of(t), t.num_elements > kSummarizeThreshold, kEdgeItems, {}, {}, 0, "..."};
  p.collect(0, 0);
  std::vector<std::string> texts;
  texts.reserve(p.shown.size());
  if (is_complex(t.dtype)) {
    for (int64_t i : p.shown) texts.push_back(complex_text(t, i));
    if (t.dims.empty()) return "(" + texts[0] + ")";  // numpy's scalar form: (1+2j)
  } else if (is_floating(t.dtype)) {
    double max_abs = 0, min_abs = INFINITY;
    for (int64_t i : p.shown) {
      const double a = std::fabs(element_as_double(t, i));
      if (!std::isfinite(a)) continue;
      max_abs = std::max(max_abs, a);
      if (a > 0) min_abs = std::min(min_abs, a);
    }
    const bool sci = max_abs >= 1e16 || (min_abs < 1e-4) || (max_abs / min_abs > 1e3 && min_abs < 1e-3 && max_abs > 0);
    for (int64_t i : p.shown) texts.push_back(float_text(element_as_double(t, i), t.dtype, sci && min_abs != INFINITY));
    // numpy aligns the decimal points: pad integer parts left, fractions right. nan and inf
    // are right-aligned to the numbers' width.
    auto finite = [](const std::string& s) {
      return s.find("nan") == std::string::npos && s.find("inf") == std::string::npos;
    };
    size_t left = 0, right = 0;
    for (auto& s : texts) {
      if (!finite(s)) continue;
      const size_t dot = std::min(s.find('.'), s.find('e'));
      const size_t l = dot == std::string::npos ? s.size() : dot;
      left = std::max(left, l);
      right = std::max(right, s.size() - l);
    }
    for (auto& s : texts)  // a wider nan or -inf widens every number's integer part
      if (!finite(s) && s.size() > left + right) left = s.size() - right;
    for (auto& s : texts) {
      if (!finite(s)) {
        if (s.size() < left + right) s = std::string(left + right - s.size(), ' ') + s;
        continue;
      }
      const size_t dot = std::min(s.find('.'), s.find('e'));
      const size_t l = dot == std::string::npos ? s.size() : dot;
      const size_t r = s.size() - l;
      s = std::string(left - l, ' ') + s + std::string(right - r, ' ');
    }
  } else {
    size_t w = 0;
    for (int64_t i : p.shown) {
      texts.push_back(int_text(t, i));
      w = std::max(w, texts.back().size());
    }
    if (t.dtype != DType::String)  // numpy pads numbers, not the objects of a string array
      for (auto& s : texts) s = std::string(w - s.size(), ' ') + s;
  }
  if (t.dims.empty()) return texts[0];
  std::string out;
  size_t k = 0;
  p.emit(0, 0, out, texts, k);
  return out;
}

std::string format_values_tf_print(const TensorImpl& t, int summarize) {
  Printer p{t, strides_of(t), true, summarize, {}, {}, 0, "..."};
  p.collect(0, 0);
  std::vector<std::string> texts;
  for (int64_t i : p.shown) {
    if (is_floating(t.dtype)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", element_as_double(t, i));
      texts.push_back(buf);
    } else {
      if (t.dtype == DType::String)  // tf.print quotes strings: ["a" "b"]
        texts.push_back("\"" + std::string(string_of(t.as<ObjectValue*>()[i])) + "\"");
      else
        texts.push_back(t.dtype == DType::Bool ? (t.as<bool>()[i] ? "1" : "0") : int_text(t, i));
    }
  }
  if (t.dims.empty()) return texts[0];
  std::string out;
  size_t k = 0;
  p.emit(0, 0, out, texts, k);
  return out;
}

}  // namespace kiln::detail
