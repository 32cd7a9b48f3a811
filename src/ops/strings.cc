// The string ops of tf.strings and tf.io that work element by element on byte strings:
// StringJoin, StringLength, StringUpper/Lower, StringStrip, Substr, StringToNumber,
// AsString, ReduceJoin, EncodeBase64 and DecodeBase64. Elements are StringValue objects
// (core/object_value.h); each kernel writes every output element once, as a new reference.
// Text is bytes: upper/lower and strip are ASCII (TensorFlow's default encoding "").
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

#include "core/format.h"
#include "core/object_value.h"
#include "kernels/broadcast.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

using detail::ObjectValue;

void set_str(TensorImpl& t, int64_t i, std::string s) { t.as<ObjectValue*>()[i] = detail::make_string(std::move(s)); }

bool is_utf8_continuation(unsigned char ch) { return (ch & 0xC0) == 0x80; }
int64_t utf8_length(std::string_view s) {
  int64_t n = 0;
  for (unsigned char ch : s) n += !is_utf8_continuation(ch);
  return n;
}

void infer_same_shape_string(InferContext& c) {
  require_string_input(c, 0);
  c.kernel_dtype = DType::String;
  c.out(0).dtype = DType::String;
  c.out(0).shape = shape_of(c.in(0));
}

// ---- StringJoin(inputs: N strings, separator): scalars broadcast to the others' one shape.
void infer_string_join(InferContext& c) {
  c.kernel_dtype = DType::String;
  c.out(0).dtype = DType::String;
  TensorShape shape = TensorShape(Dims{});
  bool have = false;
  for (int i = 0; i < c.num_inputs; ++i) {
    require_string_input(c, i);
    const InputInfo& x = c.in(i);
    if (!x.unknown_rank && x.dims->empty()) continue;
    const TensorShape s = shape_of(x);
    if (!have) {
      shape = s;
      have = true;
    } else if (!s.is_compatible_with(shape)) {
      c.fail("Input shapes do not match: " + shape_text(shape) + " vs. " + shape_text(s));
    }
  }
  c.out(0).shape = shape;
}
void string_join(KernelContext& c) {
  const std::string& sep = c.attrs.s(1);
  const TensorImpl* shaped = nullptr;
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.in(i).dims.empty()) continue;
    if (shaped && shaped->dims != c.in(i).dims)
      c.fail("Input shapes do not match: " + dims_text(shaped->dims) + " vs. " + dims_text(c.in(i).dims));
    if (!shaped) shaped = &c.in(i);
  }
  TensorImpl& out = c.out(0);
  for (int64_t e = 0; e < out.num_elements; ++e) {
    std::string s;
    for (int i = 0; i < c.num_inputs; ++i) {
      if (i) s += sep;
      s += str_at(c.in(i), c.in(i).dims.empty() ? 0 : e);
    }
    set_str(out, e, std::move(s));
  }
}

// ---- StringLength(input, unit): bytes or UTF-8 characters, as int32.
void infer_string_length(InferContext& c) {
  require_string_in(c, "unit", c.attrs.s(0), {"BYTE", "UTF8_CHAR"});
  infer_same_shape_string(c);
  c.out(0).dtype = DType::Int32;
}
void string_length(KernelContext& c) {
  const bool chars = c.attrs.s(0) == "UTF8_CHAR";
  int32_t* out = c.out(0).as<int32_t>();
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) {
    const std::string_view s = str_at(c.in(0), i);
    out[i] = static_cast<int32_t>(chars ? utf8_length(s) : static_cast<int64_t>(s.size()));
  }
}

// ---- StringUpper / StringLower(input, encoding): ASCII letters only, as TensorFlow's "".
void infer_case(InferContext& c) {
  if (!c.attrs.s(0).empty())
    throw UnimplementedError(std::string(c.op.name) + ": encoding \"" + c.attrs.s(0) +
                             "\" (kiln maps ASCII letters only, TensorFlow's encoding \"\") [Op:" + c.op.name + "]");
  infer_same_shape_string(c);
}
template <bool kUpper>
void change_case(KernelContext& c) {
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) {
    std::string s(str_at(c.in(0), i));
    for (char& ch : s) {
      if (kUpper && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
      if (!kUpper && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    set_str(c.out(0), i, std::move(s));
  }
}

// ---- StringStrip(input): leading and trailing ASCII whitespace.
bool ascii_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r'; }
std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && ascii_space(s.back())) s.remove_suffix(1);
  return s;
}
void string_strip(KernelContext& c) {
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) set_str(c.out(0), i, std::string(trim_spaces(str_at(c.in(0), i))));
}

// ---- Substr(input, pos, len, unit): pos and len have one shape, which broadcasts with the
// input's. pos may be negative (from the end); len past the end (or negative) takes the rest.
void infer_substr(InferContext& c) {
  require_string_in(c, "unit", c.attrs.s(0), {"BYTE", "UTF8_CHAR"});
  require_string_input(c, 0);
  const DType t = c.in(1).dtype;
  require_type_in(c, "T", t, {DType::Int32, DType::Int64});
  require_same_dtypes(c, 1, 2);
  const TensorShape pos = shape_of(c.in(1)), len = shape_of(c.in(2));
  if (!pos.is_compatible_with(len))
    c.fail("pos and len should have the same shape, got: " + shape_text(pos) + " vs. " + shape_text(len));
  c.kernel_dtype = DType::String;
  c.out(0).dtype = DType::String;
  c.out(0).shape = broadcast_shapes(c, c.in(0), c.in(1));
}
// The byte offsets of UTF-8 characters [pos, pos + len) of s; false when pos is out of range.
bool substr_range(std::string_view s, int64_t pos, int64_t len, bool chars, size_t* begin, size_t* count) {
  const int64_t size = chars ? utf8_length(s) : static_cast<int64_t>(s.size());
  if (pos < -size || pos > size) return false;
  if (pos < 0) pos += size;
  if (len < 0 || len > size - pos) len = size - pos;
  if (!chars) {
    *begin = static_cast<size_t>(pos);
    *count = static_cast<size_t>(len);
    return true;
  }
  size_t b = 0;
  for (int64_t k = 0; k < pos; ++k) do
      ++b;
    while (b < s.size() && is_utf8_continuation(static_cast<unsigned char>(s[b])));
  size_t e = b;
  for (int64_t k = 0; k < len; ++k) do
      ++e;
    while (e < s.size() && is_utf8_continuation(static_cast<unsigned char>(s[e])));
  *begin = b;
  *count = e - b;
  return true;
}
void substr(KernelContext& c) {
  const TensorImpl& in = c.in(0);
  if (c.in(1).dims != c.in(2).dims)
    c.fail("pos and len should have the same shape, got: " + dims_text(c.in(1).dims) + " vs. " +
           dims_text(c.in(2).dims));
  const std::vector<int64_t> pos = int_values(c.in(1)), len = int_values(c.in(2));
  const bool chars = c.attrs.s(0) == "UTF8_CHAR";
  TensorImpl& out = c.out(0);
  // TensorFlow's kernel broadcasts pos against the input only up to rank 2 (a scalar pos, or
  // pos of the input's shape, works at any rank).
  if (!c.in(1).dims.empty() && c.in(1).dims != in.dims && out.dims.size() > 2)
    throw UnimplementedError("Substr broadcast not implemented for " + std::to_string(out.dims.size()) +
                             " dimensions [Op:Substr]");
  kernels::BroadcastPlan<2> plan(out.dims, {&in.dims, &c.in(1).dims});
  int64_t e = 0;
  plan.for_each_run([&](const std::array<int64_t, 2>& off, int64_t count, const std::array<int64_t, 2>& st) {
    for (int64_t k = 0; k < count; ++k, ++e) {
      const int64_t si = off[0] + k * st[0], pi = off[1] + k * st[1];
      const std::string_view s = str_at(in, si);
      size_t b = 0, n = 0;
      if (!substr_range(s, pos[pi], len[pi], chars, &b, &n))
        c.fail("pos " + std::to_string(pos[pi]) + " out of range for string " + detail::bytes_repr(s) + " at index " +
               std::to_string(si));
      set_str(out, e, std::string(s.substr(b, n)));
    }
  });
}

// ---- StringToNumber(string_tensor, out_type): the whole string (surrounding ASCII spaces
// allowed) must be one number of the type, as TensorFlow's safe_strto* parse it.
void infer_to_number(InferContext& c) {
  const DType t = c.attrs.type(0);
  require_type_in(c, "out_type", t, {DType::Float32, DType::Float64, DType::Int32, DType::Int64});
  infer_same_shape_string(c);
  c.out(0).dtype = t;
}
template <class T>
bool parse_number(std::string_view text, T* out) {
  const std::string s(trim_spaces(text));
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const T v = std::is_same_v<T, float> ? std::strtof(s.c_str(), &end) : std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    *out = v;  // overflow gives inf, as TensorFlow's parser does
    return true;
  } else {
    if (s[0] != '-' && s[0] != '+' && (s[0] < '0' || s[0] > '9')) return false;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size() || errno == ERANGE || v < std::numeric_limits<T>::min() ||
        v > std::numeric_limits<T>::max())
      return false;
    *out = static_cast<T>(v);
    return true;
  }
}
template <class T>
void to_number_as(KernelContext& c) {
  T* out = c.out(0).as<T>();
  for (int64_t i = 0; i < c.in(0).num_elements; ++i)
    if (!parse_number(str_at(c.in(0), i), &out[i]))
      c.fail("StringToNumberOp could not correctly convert string: " + std::string(str_at(c.in(0), i)));
}
void string_to_number(KernelContext& c) {
  switch (c.out(0).dtype) {
    case DType::Float32:
      return to_number_as<float>(c);
    case DType::Float64:
      return to_number_as<double>(c);
    case DType::Int32:
      return to_number_as<int32_t>(c);
    default:
      return to_number_as<int64_t>(c);
  }
}

// ---- AsString(input, precision, scientific, shortest, width, fill): printf, with the
// format TensorFlow builds from the attrs.
enum AsStringAttr { kPrecision, kScientific, kShortest, kWidth, kFill };
void infer_as_string(InferContext& c) {
  const DType t = c.in(0).dtype;
  const Attrs& a = c.attrs;
  if (!detail::has_values(t) && t != DType::String)
    c.fail(std::string("Value for attr 'T' of ") + tf_type_name(t) + " is not in the list of allowed values");
  if (a.b(kScientific) && a.b(kShortest)) c.fail("Cannot select both scientific and shortest notation");
  if (a.s(kFill).size() > 1) c.fail("Fill string must be one or fewer characters");
  // Strings print with %s and the width alone; the other types refuse float-only attrs.
  if (!is_floating(t) && t != DType::String && (a.b(kScientific) || a.b(kShortest)))
    c.fail(std::string("scientific and shortest format not supported for datatype ") + tf_type_name(t));
  if (!is_floating(t) && t != DType::String && a.i(kPrecision) > -1)
    c.fail(std::string("precision not supported for datatype ") + tf_type_name(t));
  c.kernel_dtype = t;
  c.out(0).dtype = DType::String;
  c.out(0).shape = shape_of(c.in(0));
}
std::string as_string_format(const Attrs& a, const char* conversion, bool with_precision = true) {
  std::string f = "%";
  const std::string& fill = a.s(kFill);
  if (!fill.empty() && fill != " ") f += fill;  // a space pads as printf does anyway
  if (a.i(kWidth) > -1) f += std::to_string(a.i(kWidth));
  if (with_precision && a.i(kPrecision) > -1) f += "." + std::to_string(a.i(kPrecision));
  return f + conversion;
}
template <class... Args>
std::string format_one(const std::string& format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format.c_str(), args...);  // NOLINT: the format is built above
  std::string s(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) std::snprintf(s.data(), s.size() + 1, format.c_str(), args...);  // NOLINT
  return s;
}
template <class T>
struct AsStringKernel {
  static void run(KernelContext& c) {
    const TensorImpl& in = c.in(0);
    const Attrs& a = c.attrs;
    if (a.i(kWidth) > 4096 || a.i(kPrecision) > 4096) c.fail("width and precision must be at most 4096");
    std::string format;
    if constexpr (std::is_same_v<T, bool>)
      format = "%s";  // TensorFlow prints bools bare: no width
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      format = as_string_format(a, PRId64);
    else if constexpr (std::is_integral_v<T>)
      format = as_string_format(a, PRIu64);
    else
      format = as_string_format(a, a.b(kShortest) ? "g" : a.b(kScientific) ? "e" : "f");
    const T* x = in.as<T>();
    for (int64_t i = 0; i < in.num_elements; ++i) {
      std::string s;
      if constexpr (std::is_same_v<T, bool>)
        s = format_one(format, x[i] ? "true" : "false");
      else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        s = format_one(format, static_cast<int64_t>(x[i]));
      else if constexpr (std::is_integral_v<T>)
        s = format_one(format, static_cast<uint64_t>(x[i]));
      else
        s = format_one(format, static_cast<double>(x[i]));
      set_str(c.out(0), i, std::move(s));
    }
  }
};
void as_string_of_string(KernelContext& c) {
  const std::string format = as_string_format(c.attrs, "s", /*with_precision=*/false);
  for (int64_t i = 0; i < c.in(0).num_elements; ++i)
    set_str(c.out(0), i, format_one(format, std::string(str_at(c.in(0), i)).c_str()));
}
std::array<KernelFn, kNumDTypes> as_string_kernels() {
  auto k = kernels_for<AsStringKernel, KILN_ALL_TYPES, KILN_STORAGE_INTS, KILN_HALF_TYPES>();
  k[static_cast<int>(DType::String)] = &as_string_of_string;
  return k;
}

// ---- ReduceJoin(inputs, reduction_indices, keep_dims, separator): the strings along the
// reduced axes, joined; the first listed axis varies fastest.
std::vector<int64_t> reduce_join_axes(const std::vector<int64_t>& raw, int64_t rank,
                                      const std::function<void(const std::string&, bool)>& fail) {
  std::vector<int64_t> axes;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : raw) {
    if (a < -rank || a >= rank)
      fail("Invalid reduction dimension " + std::to_string(a) + " for input with " + std::to_string(rank) +
               " dimension(s)",
           true);
    const int64_t n = a < 0 ? a + rank : a;
    if (seen[static_cast<size_t>(n)]) fail("Duplicate reduction dimension " + std::to_string(n), false);
    seen[static_cast<size_t>(n)] = true;
    axes.push_back(n);
  }
  return axes;
}
void infer_reduce_join(InferContext& c) {
  require_string_input(c, 0);
  if (c.in(1).dtype != DType::Int32)
    c.fail(
        std::string("cannot compute ReduceJoin as input #1(zero-based) was expected to be a int32 tensor but is a ") +
        tf_type_name(c.in(1).dtype) + " tensor");
  c.kernel_dtype = DType::String;
  c.out(0).dtype = DType::String;
  const InputInfo& x = c.in(0);
  const bool keep = c.attrs.b(0);
  if (x.unknown_rank || !c.in(1).value) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const auto rank = static_cast<int64_t>(x.dims->size());
  const std::vector<int64_t> axes =
      reduce_join_axes(int_values(*c.in(1).value), rank, [&](const std::string& m, bool range) {
        if (range) throw OutOfRangeError(m + " [Op:ReduceJoin]");
        c.fail(m);
      });
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  Dims out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)])
      out.push_back((*x.dims)[d]);
    else if (keep)
      out.push_back(1);
  }
  c.out(0).shape = TensorShape(std::move(out));
}
void reduce_join(KernelContext& c) {
  const TensorImpl& x = c.in(0);
  const auto rank = static_cast<int64_t>(x.dims.size());
  const std::vector<int64_t> axes = reduce_join_axes(int_values(c.in(1)), rank, [&](const std::string& m, bool range) {
    if (range) throw OutOfRangeError(m + " [Op:ReduceJoin]");
    c.fail(m);
  });
  const std::string& sep = c.attrs.s(1);
  const Dims strides = strides_of(x.dims);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> kept;  // the kept axes, outermost first: the output's row-major order
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[static_cast<size_t>(d)]) kept.push_back(d);
  int64_t group = 1;
  for (int64_t a : axes) group *= x.dims[a];
  TensorImpl& out = c.out(0);
  std::vector<int64_t> idx(kept.size()), sub(axes.size());
  for (int64_t o = 0; o < out.num_elements; ++o) {
    int64_t rest = o, base = 0;
    for (size_t k = kept.size(); k-- > 0;) {
      const int64_t d = x.dims[kept[k]];
      base += (rest % d) * strides[kept[k]];
      rest /= d;
    }
    std::string s;
    for (int64_t g = 0; g < group; ++g) {  // axes[0] fastest
      int64_t r = g, off = base;
      for (int64_t a : axes) {
        off += (r % x.dims[a]) * strides[a];
        r /= x.dims[a];
      }
      if (g) s += sep;
      s += str_at(x, off);
    }
    set_str(out, o, std::move(s));
  }
}

// ---- EncodeBase64(input, pad) / DecodeBase64(input): the web-safe alphabet (- and _).
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
void encode_base64(KernelContext& c) {
  const bool pad = c.attrs.b(0);
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) {
    const std::string_view s = str_at(c.in(0), i);
    std::string r;
    size_t k = 0;
    for (; k + 3 <= s.size(); k += 3) {
      const uint32_t v = (uint32_t{static_cast<unsigned char>(s[k])} << 16) |
                         (uint32_t{static_cast<unsigned char>(s[k + 1])} << 8) | static_cast<unsigned char>(s[k + 2]);
      for (int sh = 18; sh >= 0; sh -= 6) r += kBase64[(v >> sh) & 63];
    }
    const size_t left = s.size() - k;
    if (left) {
      uint32_t v = uint32_t{static_cast<unsigned char>(s[k])} << 16;
      if (left == 2) v |= uint32_t{static_cast<unsigned char>(s[k + 1])} << 8;
      r += kBase64[(v >> 18) & 63];
      r += kBase64[(v >> 12) & 63];
      if (left == 2) r += kBase64[(v >> 6) & 63];
      if (pad) r.append(left == 1 ? "==" : "=");
    }
    set_str(c.out(0), i, std::move(r));
  }
}
int base64_value(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '-') return 62;
  if (ch == '_') return 63;
  return -1;
}
void decode_base64(KernelContext& c) {
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) {
    std::string_view s = str_at(c.in(0), i);
    // Up to two '=' of padding end a string whose length is a multiple of 4.
    if (s.size() % 4 == 0)
      for (int p = 0; p < 2 && !s.empty() && s.back() == '='; ++p) s.remove_suffix(1);
    if (s.size() % 4 == 1) c.fail("Base64 string length cannot be 1 modulo 4.");
    std::string r;
    uint32_t acc = 0;
    int bits = 0;
    for (char ch : s) {
      const int v = base64_value(ch);
      if (v < 0) c.fail("Invalid character found in base64.");
      acc = (acc << 6) | static_cast<uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        r += static_cast<char>((acc >> bits) & 0xff);
      }
    }
    set_str(c.out(0), i, std::move(r));
  }
}

// The row of an op from one string tensor ("input") to one tensor of its shape.
OpDef elementwise_string_op(const char* name, std::vector<AttrSpec> attrs, ShapeFn infer, KernelFn kernel) {
  return {.name = name,
          .num_inputs = 1,
          .num_outputs = 1,
          .input_args = {"input"},
          .traits = kElementwise,
          .attr_specs = std::move(attrs),
          .infer = infer,
          .kernels = string_kernel(kernel),
          .type_attr = nullptr,
          .grad = &no_gradient};
}

}  // namespace

const OpDef& op::StringJoin() {
  static const OpDef def = {.name = "StringJoin",
                            .num_inputs = -1,
                            .num_outputs = 1,
                            .input_args = {list_arg("inputs", "N")},
                            .attr_specs = {int_attr("N"), string_attr("separator", "")},
                            .infer = infer_string_join,
                            .kernels = string_kernel(&string_join),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::StringLength() {
  static const OpDef def =
      elementwise_string_op("StringLength", {string_attr("unit", "BYTE")}, infer_string_length, &string_length);
  return def;
}
const OpDef& op::StringUpper() {
  static const OpDef def =
      elementwise_string_op("StringUpper", {string_attr("encoding", "")}, infer_case, &change_case<true>);
  return def;
}
const OpDef& op::StringLower() {
  static const OpDef def =
      elementwise_string_op("StringLower", {string_attr("encoding", "")}, infer_case, &change_case<false>);
  return def;
}
const OpDef& op::StringStrip() {
  static const OpDef def = elementwise_string_op("StringStrip", {}, infer_same_shape_string, &string_strip);
  return def;
}
const OpDef& op::Substr() {
  static const OpDef def = {.name = "Substr",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "pos", "len"},
                            .attr_specs = {string_attr("unit", "BYTE")},
                            .infer = infer_substr,
                            .kernels = string_kernel(&substr),
                            .type_attr_input = 1,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::StringToNumber() {
  static const OpDef def = {.name = "StringToNumber",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"string_tensor"},
                            .traits = kElementwise,
                            .attr_specs = {type_attr("out_type", DType::Float32)},
                            .infer = infer_to_number,
                            .kernels = string_kernel(&string_to_number),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::AsString() {
  static const OpDef def = {
      .name = "AsString",
      .num_inputs = 1,
      .num_outputs = 1,
      .input_args = {"input"},
      .traits = kElementwise,
      .attr_specs = {int_attr("precision", -1), bool_attr("scientific", false), bool_attr("shortest", false),
                     int_attr("width", -1), string_attr("fill", "")},
      .infer = infer_as_string,
      .kernels = as_string_kernels(),
      .grad = &no_gradient};
  return def;
}
const OpDef& op::ReduceJoin() {
  static const OpDef def = {.name = "ReduceJoin",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"inputs", "reduction_indices"},
                            .attr_specs = {bool_attr("keep_dims", false), string_attr("separator", "")},
                            .infer = infer_reduce_join,
                            .kernels = string_kernel(&reduce_join),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::EncodeBase64() {
  static const OpDef def =
      elementwise_string_op("EncodeBase64", {bool_attr("pad", false)}, infer_same_shape_string, &encode_base64);
  return def;
}
const OpDef& op::DecodeBase64() {
  static const OpDef def = elementwise_string_op("DecodeBase64", {}, infer_same_shape_string, &decode_base64);
  return def;
}

}  // namespace kiln::ops
