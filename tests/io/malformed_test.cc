// The loader treats every file as untrusted: each malformed input below is a clear error,
// never a crash, hang or huge allocation. The corpus is made by mutating a valid model
// (control flow, variables, constants) one field at a time.
#include <filesystem>
#include <fstream>

#include "graph.pb.h"
#include "io/proto_values.h"
#include "io/saved_model.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

class Malformed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("kiln_malformed_" + std::to_string(::getpid()))).string();
    Variable w(constant<float>({1, 2, 3, 4}, {2, 2}), "w");
    auto f = function(
        [&](Tensor x) {
          Tensor y = matmul(x, w.read()) + 1.0f;
          return cond(
              reduce_sum(y) > 0, [&] { return y; }, [&] { return -y; });
        },
        {.arg_names = {"x"}});
    save(dir_, f.get_concrete_function(ones({1, 2})));
    for (const char* name : {"graph.pb", "manifest.json", "variables.safetensors"}) {
      std::ifstream in(dir_ + "/" + name, std::ios::binary);
      files_[name] = std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static tensorflow::GraphDef graph() {
    tensorflow::GraphDef def;
    EXPECT_TRUE(def.ParseFromString(files_.at("graph.pb")));
    return def;
  }
  // The signature's FunctionDef (the one named in the manifest).
  static tensorflow::FunctionDef* main_function(tensorflow::GraphDef& def) {
    for (auto& f : *def.mutable_library()->mutable_function())
      if (f.signature().name().rfind("__inference_", 0) == 0) return &f;
    return nullptr;
  }
  static tensorflow::NodeDef* node_of(tensorflow::FunctionDef* f, const std::string& op) {
    for (auto& n : *f->mutable_node_def())
      if (n.op() == op) return &n;
    return nullptr;
  }
  // Loads with one file replaced (checksums off, so the parser behind them is reached).
  template <class E = InvalidArgumentError>
  static void expect_rejected(const std::string& file, const std::string& bytes, const std::string& message) {
    auto files = files_;
    files[file] = bytes;
    expect_error<E>([&] { io::load_from_files(files, false); }, message);
  }
  static void expect_graph_rejected(const tensorflow::GraphDef& def, const std::string& message) {
    std::string bytes;
    def.SerializeToString(&bytes);
    expect_rejected("graph.pb", bytes, message);
  }

  static std::string dir_;
  static std::map<std::string, std::string> files_;
};
std::string Malformed::dir_;
std::map<std::string, std::string> Malformed::files_;

}  // namespace

TEST_F(Malformed, TheUnmodifiedModelLoads) {
  EXPECT_NO_THROW(io::load_from_files(files_, true));
  EXPECT_NO_THROW(load(dir_));
}

TEST_F(Malformed, ChecksumMismatchOnDisk) {
  const std::string copy = dir_ + "_copy";
  fs::remove_all(copy);
  fs::copy(dir_, copy);
  {
    std::fstream f(copy + "/graph.pb", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x7f');
  }
  expect_error<DataLossError>([&] { load(copy); }, "checksum mismatch: graph.pb");
  fs::remove(copy + "/variables.safetensors");
  expect_error<NotFoundError>([&] { load(copy); }, "variables.safetensors");
  fs::remove_all(copy);
  expect_error<NotFoundError>([&] { load(copy); }, "cannot open");
}

TEST_F(Malformed, Manifest) {
  expect_rejected<DataLossError>("manifest.json", "{not json", "not valid JSON");
  expect_rejected<DataLossError>("manifest.json", "[]", "not a kiln saved model manifest");
  std::string m = files_.at("manifest.json");
  std::string v99 = m;
  v99.replace(v99.find("\"format_version\": 1"), 19, "\"format_version\": 99");
  expect_rejected<DataLossError>("manifest.json", v99, "format_version 99 is not supported");
  std::string no_files = m.substr(0, m.find("\"files\"")) + "\"x\": 0, " + m.substr(m.find("\"format\""));
  expect_rejected<DataLossError>("manifest.json", no_files, "files is missing");
  std::string bad_dtype = m;
  bad_dtype.replace(bad_dtype.find("\"dtype\": \"float32\""), 18, "\"dtype\": \"complex\"");
  expect_rejected<DataLossError>("manifest.json", bad_dtype, "unknown dtype");
  std::string bad_function = m;
  bad_function.replace(bad_function.find("__inference_"), 12, "__missing___");
  expect_rejected("manifest.json", bad_function, "is not in the function library");
}

TEST_F(Malformed, GraphBytes) {
  expect_rejected<DataLossError>("graph.pb", std::string("\xff\xff\xff\xff garbage", 12), "not a valid GraphDef");
  expect_rejected("graph.pb", "", "is not in the function library");
}

TEST_F(Malformed, UnknownOp) {
  auto def = graph();
  node_of(main_function(def), "MatMul")->set_op("FooBar");
  expect_graph_rejected(def, "Op type not registered 'FooBar'");
  def = graph();
  node_of(main_function(def), "MatMul")->set_op("KilnFusedElementwise");  // internal ops are never loaded
  expect_graph_rejected(def, "Op type not registered 'KilnFusedElementwise'");
}

TEST_F(Malformed, AttrTypesAndNames) {
  auto def = graph();
  (*node_of(main_function(def), "MatMul")->mutable_attr())["transpose_a"].set_i(3);
  expect_graph_rejected(def, "attr 'transpose_a' has the wrong type: expected bool");
  def = graph();
  // An attr with a default may be missing (TensorFlow strips them); one without may not.
  node_of(main_function(def), "MatMul")->mutable_attr()->erase("transpose_b");
  {
    std::string bytes;
    def.SerializeToString(&bytes);
    auto files = files_;
    files["graph.pb"] = bytes;
    EXPECT_NO_THROW(io::load_from_files(files, false));
  }
  def = graph();
  node_of(main_function(def), "Const")->mutable_attr()->erase("dtype");
  expect_graph_rejected(def, "NodeDef missing attr 'dtype'");
  def = graph();
  (*node_of(main_function(def), "MatMul")->mutable_attr())["frobnicate"].set_b(true);
  expect_graph_rejected(def, "NodeDef mentions attr 'frobnicate' not in Op<name=MatMul>");
}

TEST_F(Malformed, DimsDtypesAndTensorSizes) {
  auto def = graph();
  auto* value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->mutable_tensor_shape()->add_dim()->set_size(-5);
  expect_graph_rejected(def, "bad dimension -5");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(tensorflow::DT_STRING);
  expect_graph_rejected(def, "unsupported dtype 7");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->clear_float_val();
  value->set_tensor_content(std::string(7, 'x'));
  value->mutable_tensor_shape()->add_dim()->set_size(2);
  expect_graph_rejected(def, "tensor_content has 7 bytes; dtype and shape need 8");
  def = graph();  // a small value asking for a huge tensor is refused before allocating
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  value->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 31);
  expect_graph_rejected(def, "must store its bytes in tensor_content");
  def = graph();
  value = (*node_of(main_function(def), "Const")->mutable_attr())["value"].mutable_tensor();
  for (int i = 0; i < 40; ++i) value->mutable_tensor_shape()->add_dim()->set_size(1);
  expect_graph_rejected(def, "rank 40 exceeds 32");
  def = graph();
  main_function(def)->mutable_signature()->mutable_input_arg(0)->set_type(tensorflow::DT_INT32);
  expect_graph_rejected(def, "is int32 but");
}

TEST_F(Malformed, DanglingAndCyclicInputs) {
  auto def = graph();
  auto* mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, "nowhere:output:0");
  expect_graph_rejected(def, "input 'nowhere:output:0' names no node");
  def = graph();
  node_of(main_function(def), "MatMul")->set_input(0, "x:output:abc");
  expect_graph_rejected(def, "malformed input 'x:output:abc'");
  def = graph();
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, mm->name() + ":output:5");
  expect_graph_rejected(def, "is on a cycle");
  def = graph();
  auto* add = node_of(main_function(def), "AddV2");
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, add->name() + ":output:0");
  expect_graph_rejected(def, "is on a cycle");
  def = graph();
  mm = node_of(main_function(def), "MatMul");
  mm->set_input(0, node_of(main_function(def), "Const")->name() + ":output:3");
  expect_graph_rejected(def, "output 3 does not exist");
  def = graph();
  node_of(main_function(def), "MatMul")->add_input("x");
  expect_graph_rejected(def, "expects 2 inputs, got 3");
  def = graph();
  node_of(main_function(def), "MatMul")->set_name("x");
  expect_graph_rejected(def, "node name 'x' is empty, malformed or not unique");
}

TEST_F(Malformed, FunctionsThatCallThemselves) {
  auto def = graph();
  std::string branch;
  for (auto& f : *def.mutable_library()->mutable_function())
    if (f.signature().name().rfind("__inference_", 0) != 0) branch = f.signature().name();
  ASSERT_FALSE(branch.empty());
  // Make a branch contain an If whose branch is itself.
  for (auto& f : *def.mutable_library()->mutable_function()) {
    if (f.signature().name() != branch) continue;
    auto* n = f.add_node_def();
    n->set_name("recurse");
    n->set_op("StatelessIf");
    n->add_input(f.signature().input_arg(0).name());
    n->add_input(f.signature().input_arg(0).name());
    (*n->mutable_attr())["then_branch"].mutable_func()->set_name(branch);
    (*n->mutable_attr())["else_branch"].mutable_func()->set_name(branch);
  }
  expect_graph_rejected(def, "calls itself");
  def = graph();
  node_of(main_function(def), "StatelessIf")->mutable_attr()->at("then_branch").mutable_func()->set_name("ghost");
  expect_graph_rejected(def, "function 'ghost' is not in the function library");
  def = graph();
  *def.mutable_library()->add_function() = *main_function(def);
  expect_graph_rejected(def, "defines '" + main_function(def)->signature().name() + "' twice");
}

TEST_F(Malformed, Variables) {
  auto def = graph();
  (*node_of(main_function(def), "VarHandleOp")->mutable_attr())["shared_name"].set_s("nope");
  expect_graph_rejected(def, "no saved variable named 'nope'");
  def = graph();
  node_of(main_function(def), "ReadVariableOp")->clear_input();
  expect_graph_rejected(def, "needs a variable handle");
  def = graph();
  (*node_of(main_function(def), "VarHandleOp")->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(9);
  expect_graph_rejected(def, "shape differs from the saved variable's");
}

// An optimizer update takes two variables (TensorFlow's order: handles first).
TEST(MalformedTraining, OpsWithSeveralVariableHandles) {
  Variable w(constant<float>({1, 2}, {2}), "w");
  SGD opt(0.1, 0.9);
  auto f = function([&](const Tensor& g) { opt.apply_gradients({g}, {&w}); }, {.arg_names = {"g"}});
  const std::string dir = temp_path("malformed_training");
  save(dir, f.get_concrete_function(constant<float>({1, 1}, {2})));
  std::map<std::string, std::string> files;
  for (const char* name : {"graph.pb", "manifest.json", "variables.safetensors"}) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    files[name] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove_all(dir);
  EXPECT_NO_THROW(io::load_from_files(files, false));
  auto rejected = [&](const std::function<void(tensorflow::NodeDef&)>& mutate, const std::string& message) {
    tensorflow::GraphDef def;
    ASSERT_TRUE(def.ParseFromString(files.at("graph.pb")));
    tensorflow::NodeDef* apply = nullptr;
    for (auto& fn : *def.mutable_library()->mutable_function())
      for (auto& n : *fn.mutable_node_def())
        if (n.op() == "ResourceApplyKerasMomentum") apply = &n;
    ASSERT_NE(apply, nullptr);
    mutate(*apply);
    auto changed = files;
    def.SerializeToString(&changed["graph.pb"]);
    expect_error<InvalidArgumentError>([&] { io::load_from_files(changed, false); }, message);
  };
  rejected([](tensorflow::NodeDef& n) { n.mutable_input()->DeleteSubrange(1, 1); },
           "needs a variable handle (VarHandleOp) as input 1");
  rejected([](tensorflow::NodeDef& n) { n.mutable_input()->SwapElements(1, 2); },
           "variable handles must come before its other inputs");
  rejected([](tensorflow::NodeDef& n) { n.set_input(1, n.input(0)); }, "var and accum must be different variables");
  rejected([](tensorflow::NodeDef& n) { n.set_op("ResourceApplyGradientDescent"); },
           "takes 1 variable handle(s), got 2");
  rejected([](tensorflow::NodeDef& n) { (*n.mutable_attr())["use_nesterov"].set_i(1); }, "use_nesterov");
}

TEST_F(Malformed, Safetensors) {
  const std::string& good = files_.at("variables.safetensors");
  expect_rejected<DataLossError>("variables.safetensors", "abc", "shorter than its 8-byte header length");
  std::string huge = good;
  huge[7] = '\x7f';
  expect_rejected<DataLossError>("variables.safetensors", huge, "exceeds the file");
  expect_rejected<DataLossError>("variables.safetensors", good.substr(0, good.size() - 4),
                                 "data_offsets outside the data");
  expect_rejected<DataLossError>("variables.safetensors", good + "xxxx", "unused bytes");
  std::string bad_dtype = good;
  bad_dtype.replace(bad_dtype.find("\"F32\""), 5, "\"Q32\"");
  expect_rejected<DataLossError>("variables.safetensors", bad_dtype, "unsupported dtype");
  std::string bad_shape = good;
  bad_shape.replace(bad_shape.find("[2,2]"), 5, "[2,3]");
  expect_rejected<DataLossError>("variables.safetensors", bad_shape, "holds 16 bytes but its dtype and shape need 24");
  std::string renamed = good;
  renamed.replace(renamed.find("\"w\""), 3, "\"v\"");
  expect_rejected("variables.safetensors", renamed, "no saved variable named 'w'");
}

TEST(AttrTable, EveryLoadableOpsAttrsHaveAKind) {
  for (const ops::OpDef* op : ops::all_ops()) {
    if (op->has(ops::kInternal)) continue;
    for (const char* name : op->attr_names)
      EXPECT_NE(io::attr_kind(name), io::AttrKind::kUnknown) << op->name << " attr " << name;
  }
}
