// ReadFile (a file's bytes as a scalar string) and WriteFile (a scalar string to a file, its
// directory made first), as TensorFlow's: both run when the function runs, never at trace time
// (kStateful), and a missing file is NotFoundError in TensorFlow's words. A file read must fit
// in one string (2 GiB - 1 bytes), as TensorFlow's tstring.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/object_value.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

constexpr std::uintmax_t kLargestFile = (1u << 31) - 1;

std::string scalar_string(const KernelContext& c, int i, const char* what) {
  const TensorImpl& t = c.in(i);
  if (t.num_elements != 1 || !t.dims.empty())
    c.fail(std::string(what) + " must be a scalar, got shape " + dims_text(t.dims));
  return std::string(detail::string_of(t.as<detail::ObjectValue*>()[0]));
}

void require_scalar_string(const InferContext& c, int i, const char* what) {
  if (c.in(i).dtype != DType::String)
    c.fail(std::string(what) + " must be a string tensor, got " + tf_type_name(c.in(i).dtype));
  if (!c.in(i).unknown_rank && !c.in(i).dims->empty())
    c.fail(std::string("Shape must be rank 0 but is rank ") + std::to_string(c.in(i).dims->size()));
}

void infer_read(InferContext& c) {
  require_scalar_string(c, 0, "filename");
  c.out(0).dtype = DType::String;
  c.out(0).shape = TensorShape({});
  c.kernel_dtype = DType::String;
}

void read_file(KernelContext& c) {
  const std::string name = scalar_string(c, 0, "filename");
  std::error_code ec;
  if (std::filesystem::is_directory(name, ec)) throw FailedPreconditionError(name + "; Is a directory");
  std::ifstream in(name, std::ios::binary);
  if (!in) throw NotFoundError(name + "; No such file or directory");
  const std::uintmax_t size = std::filesystem::file_size(name, ec);
  if (!ec && size > kLargestFile)
    throw ResourceExhaustedError(name + " has " + std::to_string(size) + " bytes, more than a string holds (" +
                                 std::to_string(kLargestFile) + ")");
  // In chunks, so that an endless file (a device, a pipe) stops at the limit too.
  std::string bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (bytes.size() + static_cast<size_t>(in.gcount()) > kLargestFile)
      throw ResourceExhaustedError(name + " has more bytes than a string holds (" + std::to_string(kLargestFile) + ")");
    bytes.append(chunk, static_cast<size_t>(in.gcount()));
  }
  c.out(0).as<detail::ObjectValue*>()[0] = detail::make_string(std::move(bytes));
}

void infer_write(InferContext& c) {
  require_scalar_string(c, 0, "filename");
  require_scalar_string(c, 1, "contents");
  c.kernel_dtype = DType::String;
}

void write_file(KernelContext& c) {
  const std::string name = scalar_string(c, 0, "filename"), contents = scalar_string(c, 1, "contents");
  const std::filesystem::path parent = std::filesystem::path(name).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  if (!out) throw NotFoundError(name + "; " + std::strerror(errno));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out.flush()) throw DataLossError(name + ": the write failed");
}

}  // namespace

const OpDef& op::ReadFile() {
  static const OpDef def = {.name = "ReadFile",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"filename"},
                            .traits = kStateful,
                            .infer = infer_read,
                            .kernels = string_kernel(&read_file),
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"contents"}};
  return def;
}
const OpDef& op::WriteFile() {
  static const OpDef def = {.name = "WriteFile",
                            .num_inputs = 2,
                            .num_outputs = 0,
                            .input_args = {"filename", "contents"},
                            .traits = kStateful | kSideEffect,
                            .infer = infer_write,
                            .kernels = string_kernel(&write_file),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
