// Datasets on disk: Dataset.save / Dataset.load in TensorFlow's saved-dataset layout, and
// cache(filename). Both store an element as one TFRecord per component, each a serialized
// TensorProto with its bytes in tensor_content (TensorFlow's snapshot format, version 2):
//   <path>/snapshot.metadata                       SnapshotMetadataRecord (run, dtypes, count)
//   <path>/dataset_spec.pb                         StructuredValue of the element_spec
//   <path>/<run_id>/<shard:08d>.shard/<ckpt:08d>.snapshot
// Everything read is hostile: records are checked by read_record, protos parsed with bounds,
// tensors validated by tensor_from_proto and each element against the spec it must have.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "data/dataset.h"
#include "data/record_io.h"
#include "graph/graph_def.h"
#include "io/files.h"
#include "io/proto_values.h"
#include "io/structured_value.h"
#include "snapshot.pb.h"

namespace kiln::data {
namespace {

namespace fs = std::filesystem;
using detail::ByteReader;
using detail::ByteWriter;
using detail::Compression;

constexpr size_t kMaxMetadataBytes = size_t{1} << 20;
constexpr size_t kMaxOpenShards = 1024;  // a shard is an open file while saving
constexpr int64_t kSnapshotVersion = 2;

// A component as TensorFlow's snapshot writer stores it: dtype, shape and tensor_content
// (strings as the encoded list: every length as a varint32, then the bytes).
std::string component_record(const Tensor& t) {
  const kiln::detail::TensorImpl& impl = *kiln::detail::impl_of(t);
  tensorflow::TensorProto p;
  p.set_dtype(static_cast<tensorflow::DataType>(graph::dtype_to_proto(impl.dtype)));
  auto* shape = p.mutable_tensor_shape();
  for (int64_t d : impl.dims) shape->add_dim()->set_size(d);
  if (impl.dtype == DType::String) {
    std::string content;
    auto* const* values = impl.as<kiln::detail::ObjectValue*>();
    for (int64_t i = 0; i < impl.num_elements; ++i) {
      uint64_t n = kiln::detail::string_of(values[i]).size();
      do {
        content.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
        n >>= 7;
      } while (n != 0);
    }
    for (int64_t i = 0; i < impl.num_elements; ++i) content += kiln::detail::string_of(values[i]);
    p.set_tensor_content(std::move(content));
  } else {
    p.set_tensor_content(std::string(static_cast<const char*>(impl.data), impl.nbytes()));
  }
  return p.SerializeAsString();
}

void check_savable(const std::vector<TensorSpec>& spec, const char* what) {
  for (size_t i = 0; i < spec.size(); ++i)
    if (spec[i].dtype == DType::Variant)
      throw InvalidArgumentError(std::string(what) + ": component " + std::to_string(i) +
                                 " is a variant (a dataset, as window makes); only tensors can be written");
}

// Elements of `spec` from one file of component records, in order.
class RecordElementReader {
 public:
  RecordElementReader(const std::string& path, Compression c, const std::vector<TensorSpec>* spec)
      : in_(path, c), spec_(spec) {}
  bool next(Element* out) {
    std::string record;
    for (size_t i = 0; i < spec_->size(); ++i) {
      if (!detail::read_record(in_, &record)) {
        if (i == 0) return false;
        throw DataLossError("The file " + in_.path() + " ends inside an element (after component " +
                            std::to_string(i - 1) + ")");
      }
      tensorflow::TensorProto p;
      if (!p.ParseFromString(record))
        throw DataLossError("The file " + in_.path() + " holds a record that is not a TensorProto (at byte " +
                            std::to_string(in_.offset()) + ")");
      out->push_back(io::tensor_from_proto(p, in_.path()));
    }
    detail::check_element(*out, *spec_, ("The saved elements of " + in_.path()).c_str());
    return true;
  }

 private:
  ByteReader in_;
  const std::vector<TensorSpec>* spec_;
};

std::string numbered(int64_t n, const char* suffix) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08lld%s", static_cast<long long>(n), suffix);
  return buf;
}

// "00000012.shard" -> 12; -1 for any other name.
int64_t number_before(const std::string& name, const std::string& suffix) {
  if (name.size() <= suffix.size() || name.size() - suffix.size() > 18 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  int64_t n = 0;
  for (size_t i = 0; i < name.size() - suffix.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// The entries of `dir` named <number><suffix>, by number.
std::vector<std::string> numbered_entries(const fs::path& dir, const std::string& suffix) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const int64_t n = number_before(name, suffix);
    if (n >= 0) found.emplace_back(n, entry.path().string());
  }
  if (ec) throw NotFoundError("Could not list the directory " + dir.string() + ": " + ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::string random_run_id() {
  std::random_device rd;
  const uint64_t id = (static_cast<uint64_t>(rd()) << 32 | rd()) >> 1;  // TensorFlow's are positive int64s
  return std::to_string(id);
}

// A run id names a directory: digits and letters only, so a hostile file cannot point outside.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

tensorflow::SnapshotMetadataRecord read_metadata(const std::string& path) {
  const std::string file = (fs::path(path) / "snapshot.metadata").string();
  tensorflow::SnapshotMetadataRecord m;
  if (!m.ParseFromString(io::read_file(file, kMaxMetadataBytes)))
    throw DataLossError("The saved dataset's metadata " + file + " is not a SnapshotMetadataRecord");
  if (!m.finalized())
    throw FailedPreconditionError("The saved dataset at " + path +
                                  " is not finalized: the save that wrote it did not finish");
  if (m.version() != kSnapshotVersion)
    throw UnimplementedError("The saved dataset at " + path + " has snapshot version " + std::to_string(m.version()) +
                             "; kiln reads version 2");
  if (!plain_name(m.run_id()))
    throw DataLossError("The saved dataset's metadata " + file + " names an invalid run directory");
  return m;
}

// The saved elements: the shards read as TensorFlow's default reader_func does, an interleave
// with one shard per CPU in the cycle, taking one element from each in turn.
class LoadDataset final : public DatasetImpl {
 public:
  LoadDataset(std::vector<TensorSpec> spec, int64_t cardinality, std::vector<std::vector<std::string>> shards,
              Compression c)
      : DatasetImpl("LoadDataset", std::move(spec), cardinality), shards_(std::move(shards)), compression_(c) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct Shard {
      const std::vector<std::string>* files;
      size_t next_file = 0;
      std::unique_ptr<RecordElementReader> reader;
    };
    struct It final : IteratorImpl {
      const LoadDataset* ds;
      DatasetPtr keep;
      std::vector<Shard> cycle;
      size_t next_shard = 0, at = 0;
      bool pull(Shard& s, Element* out) {
        for (;;) {
          if (!s.reader) {
            if (s.next_file >= s.files->size()) return false;
            s.reader =
                std::make_unique<RecordElementReader>((*s.files)[s.next_file++], ds->compression_, &ds->element_spec());
          }
          if (s.reader->next(out)) return true;
          s.reader.reset();
        }
      }
      bool next(Element* out) override {
        while (!cycle.empty()) {
          if (at >= cycle.size()) at = 0;
          if (pull(cycle[at], out)) {
            ++at;
            return true;
          }
          if (next_shard < ds->shards_.size()) {  // the spent shard's place goes to the next one
            cycle[at] = Shard{.files = &ds->shards_[next_shard++], .next_file = 0, .reader = nullptr};
          } else {
            cycle.erase(cycle.begin() + static_cast<std::ptrdiff_t>(at));
          }
        }
        return false;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    const size_t cycle_length = std::max(1u, std::thread::hardware_concurrency());
    while (it->next_shard < shards_.size() && it->cycle.size() < cycle_length)
      it->cycle.push_back(Shard{.files = &shards_[it->next_shard++], .next_file = 0, .reader = nullptr});
    return it;
  }

 private:
  std::vector<std::vector<std::string>> shards_;
  Compression compression_;
};

// cache(filename): the first complete pass is written beside `file` and renamed into place
// when it ends; an iterator that finds the file reads it instead of its input. A pass that
// stops early (or fails) leaves nothing behind.
class FileCache final : public DatasetImpl {
 public:
  FileCache(DatasetPtr input, std::string file)
      : DatasetImpl("CacheDataset", input->element_spec(), input->cardinality()),
        input_(std::move(input)),
        file_(std::move(file)) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    std::error_code ec;
    if (fs::is_regular_file(file_, ec)) {
      struct Reader final : IteratorImpl {
        DatasetPtr keep;
        RecordElementReader in;
        Reader(DatasetPtr k, const std::string& f, const std::vector<TensorSpec>* spec)
            : keep(std::move(k)), in(f, Compression::kNone, spec) {}
        bool next(Element* out) override { return in.next(out); }
      };
      return std::make_unique<Reader>(shared_from_this(), file_, &element_spec());
    }
    struct Writer final : IteratorImpl {
      DatasetPtr keep;
      std::string file, tmp;
      std::unique_ptr<IteratorImpl> input;
      std::unique_ptr<ByteWriter> out;
      ~Writer() override {
        if (out) {
          out.reset();
          std::error_code ignored;
          fs::remove(tmp, ignored);
        }
      }
      bool next(Element* element) override {
        if (!input->next(element)) {
          out->close();
          out.reset();
          std::error_code ec;
          fs::rename(tmp, file, ec);
          if (ec) throw UnknownError("Could not put the cache file " + file + " in place: " + ec.message());
          return false;
        }
        for (const Tensor& t : *element) detail::write_record(*out, component_record(t));
        return true;
      }
    };
    auto it = std::make_unique<Writer>();
    it->keep = shared_from_this();
    it->file = file_;
    it->tmp = file_ + ".tmp-" + random_run_id();
    it->input = input_->make_iterator();
    it->out = std::make_unique<ByteWriter>(it->tmp, Compression::kNone);
    return it;
  }

 private:
  DatasetPtr input_;
  std::string file_;
};

}  // namespace

void save(const Dataset& dataset, const std::string& path, const SaveOptions& options) {
  std::vector<TensorSpec> spec = dataset.element_spec();
  const Compression compression = detail::compression_of(options.compression);
  if (options.shard_by_first_component) {
    if (spec.empty() || spec[0].dtype != DType::Int64 || spec[0].shape.rank() != 0)
      throw InvalidArgumentError("save: the shard index (the first component) must be an int64 scalar");
    spec.erase(spec.begin());
  }
  if (spec.empty()) throw InvalidArgumentError("save: the dataset's elements have no components");
  check_savable(spec, "save");
  tensorflow::StructuredValue structure;
  if (!options.structure_json.empty()) {
    const nlohmann::json j = nlohmann::json::parse(options.structure_json, nullptr, false);
    if (j.is_discarded()) throw InvalidArgumentError("save: structure_json is not JSON");
    io::structure_from_json(j, &structure, "save");
    const std::vector<TensorSpec> declared = io::flat_tensor_specs(structure, "save");
    bool same = declared.size() == spec.size();
    for (size_t i = 0; same && i < spec.size(); ++i) same = declared[i].dtype == spec[i].dtype;
    if (!same) throw InvalidArgumentError("save: structure_json does not describe the dataset's components");
  } else {
    auto leaf = [](const TensorSpec& s, tensorflow::StructuredValue* v) {
      auto* t = v->mutable_tensor_spec_value();
      if (s.shape.unknown_rank())
        t->mutable_shape()->set_unknown_rank(true);
      else
        for (int64_t d : s.shape.dims()) t->mutable_shape()->add_dim()->set_size(d);
      t->set_dtype(static_cast<tensorflow::DataType>(graph::dtype_to_proto(s.dtype)));
    };
    if (spec.size() == 1)
      leaf(spec[0], &structure);
    else
      for (const TensorSpec& s : spec) leaf(s, structure.mutable_tuple_value()->add_values());
  }

  const fs::path dir(path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw NotFoundError("save: could not make the directory " + path + ": " + ec.message());
  const std::string run_id = random_run_id();
  const fs::path run = dir / run_id;
  fs::create_directory(run, ec);
  if (ec) throw NotFoundError("save: could not make the directory " + run.string() + ": " + ec.message());
  struct RemoveUnlessKept {  // a save that fails leaves the previous one (if any) as it was
    fs::path run;
    bool keep = false;
    ~RemoveUnlessKept() {
      std::error_code ignored;
      if (!keep) fs::remove_all(run, ignored);
    }
  } cleanup{.run = run};

  std::map<int64_t, std::unique_ptr<ByteWriter>> shards;
  int64_t count = 0;
  Iterator it = dataset.make_iterator();
  std::vector<Tensor> element;
  while (it.next(&element)) {
    int64_t shard = 0;
    size_t first = 0;
    if (options.shard_by_first_component) {
      shard = element[0].item<int64_t>();
      if (shard < 0)
        throw InvalidArgumentError("save: shard_func returned " + std::to_string(shard) +
                                   "; a shard index must be non-negative");
      first = 1;
    }
    auto& out = shards[shard];
    if (!out) {
      if (shards.size() > kMaxOpenShards)
        throw InvalidArgumentError("save: shard_func made more than " + std::to_string(kMaxOpenShards) + " shards");
      const fs::path shard_dir = run / numbered(shard, ".shard");
      fs::create_directory(shard_dir, ec);
      if (ec) throw NotFoundError("save: could not make the directory " + shard_dir.string() + ": " + ec.message());
      out = std::make_unique<ByteWriter>((shard_dir / numbered(0, ".snapshot")).string(), compression);
    }
    for (size_t i = first; i < element.size(); ++i) detail::write_record(*out, component_record(element[i]));
    ++count;
    element.clear();
  }
  for (auto& [index, out] : shards) out->close();

  tensorflow::SnapshotMetadataRecord m;
  m.set_run_id(run_id);
  m.set_creation_timestamp(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  m.set_version(kSnapshotVersion);
  for (const TensorSpec& s : spec) m.add_dtype(static_cast<tensorflow::DataType>(graph::dtype_to_proto(s.dtype)));
  m.set_num_elements(count);
  m.set_finalized(true);
  io::write_file_atomically((dir / "dataset_spec.pb").string(), structure.SerializeAsString());
  io::write_file_atomically((dir / "snapshot.metadata").string(), m.SerializeAsString());
  cleanup.keep = true;
}

std::string saved_structure(const std::string& path) {
  const std::string file = (fs::path(path) / "dataset_spec.pb").string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw NotFoundError("tf.data snapshot element_spec file not found: " + file + ".");
  tensorflow::StructuredValue structure;
  if (!structure.ParseFromString(io::read_file(file, kMaxMetadataBytes)))
    throw DataLossError("The saved dataset's element_spec " + file + " is not a StructuredValue");
  return io::structure_to_json(structure, file).dump();
}

Dataset load(const std::string& path, const std::string& compression, std::vector<TensorSpec> element_spec) {
  const Compression c = detail::compression_of(compression);
  if (element_spec.empty()) {
    tensorflow::StructuredValue structure;
    const nlohmann::json j = nlohmann::json::parse(saved_structure(path));
    io::structure_from_json(j, &structure, path);
    element_spec = io::flat_tensor_specs(structure, path);
  }
  check_savable(element_spec, "load");
  const tensorflow::SnapshotMetadataRecord m = read_metadata(path);
  if (m.dtype_size() != 0) {
    bool same = m.dtype_size() == static_cast<int>(element_spec.size());
    for (size_t i = 0; same && i < element_spec.size(); ++i)
      same = m.dtype(static_cast<int>(i)) == graph::dtype_to_proto(element_spec[i].dtype);
    if (!same)
      throw InvalidArgumentError("load: the element_spec does not match the saved dataset's dtypes at " + path);
  }
  const fs::path run = fs::path(path) / m.run_id();
  std::error_code ec;
  if (!fs::is_directory(run, ec))
    throw NotFoundError("The saved dataset's run directory " + run.string() + " is missing");
  std::vector<std::vector<std::string>> shards;
  for (const std::string& shard : numbered_entries(run, ".shard"))
    shards.push_back(numbered_entries(shard, ".snapshot"));
  const int64_t cardinality = m.num_elements() >= 0 ? m.num_elements() : kUnknownCardinality;
  return Dataset(std::make_shared<LoadDataset>(std::move(element_spec), cardinality, std::move(shards), c));
}

Dataset cache(const Dataset& input, const std::string& filename) {
  if (filename.empty()) return cache(input);
  check_savable(input.element_spec(), "cache");
  return Dataset(std::make_shared<FileCache>(input.impl(), filename + ".kiln-cache"));
}

}  // namespace kiln::data
