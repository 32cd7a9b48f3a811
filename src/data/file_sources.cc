// The file sources: TFRecordDataset and TextLineDataset (one string scalar per record or
// line, files read in order), and TFRecordWriter.
#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "data/dataset.h"
#include "data/record_io.h"

namespace kiln::data {
namespace {

Tensor string_scalar(std::string bytes) {
  kiln::detail::TensorImpl* t = kiln::detail::make_concrete(DType::String, Dims{});
  Tensor out = kiln::detail::wrap(t);
  t->as<kiln::detail::ObjectValue*>()[0] = kiln::detail::make_string(std::move(bytes));
  return out;
}

class Files final : public DatasetImpl {
 public:
  Files(const char* kind, std::vector<std::string> files, detail::Compression c, bool lines)
      : DatasetImpl(kind, {{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::String}},
                    kUnknownCardinality),
        files_(std::move(files)),
        compression_(c),
        lines_(lines) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Files* ds;
      DatasetPtr keep;
      size_t next_file = 0;
      std::unique_ptr<detail::ByteReader> reader;
      std::string bytes;
      bool next(Element* out) override {
        for (;;) {
          if (!reader) {
            if (next_file >= ds->files_.size()) return false;
            reader = std::make_unique<detail::ByteReader>(ds->files_[next_file++], ds->compression_);
          }
          const bool got = ds->lines_ ? detail::read_line(*reader, &bytes) : detail::read_record(*reader, &bytes);
          if (got) {
            out->push_back(string_scalar(std::move(bytes)));
            bytes = std::string();
            return true;
          }
          reader.reset();
        }
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    return it;
  }

 private:
  std::vector<std::string> files_;
  detail::Compression compression_;
  bool lines_;
};

}  // namespace

Dataset tfrecords(std::vector<std::string> filenames, const std::string& compression) {
  return Dataset(
      std::make_shared<Files>("TFRecordDataset", std::move(filenames), detail::compression_of(compression), false));
}

Dataset text_lines(std::vector<std::string> filenames, const std::string& compression) {
  return Dataset(
      std::make_shared<Files>("TextLineDataset", std::move(filenames), detail::compression_of(compression), true));
}

struct TFRecordWriter::Impl {
  detail::ByteWriter out;
  Impl(const std::string& path, detail::Compression c) : out(path, c) {}
};

TFRecordWriter::TFRecordWriter(const std::string& path, const std::string& compression)
    : impl_(std::make_unique<Impl>(path, detail::compression_of(compression))) {}
TFRecordWriter::~TFRecordWriter() = default;
void TFRecordWriter::write(const std::string& record) { detail::write_record(impl_->out, record); }
void TFRecordWriter::flush() { impl_->out.flush(); }
void TFRecordWriter::close() { impl_->out.close(); }

}  // namespace kiln::data
