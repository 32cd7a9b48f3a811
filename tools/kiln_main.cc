// The kiln command-line program: inspect, run, draw and export saved models.
//   kiln show DIR
//   kiln run DIR [--signature S] --input NAME=VALUE ...
//   kiln graph DIR --format pbtxt|dot|svg [--signature S] [--optimized] [-o FILE]
//   kiln export-tfjs DIR OUT [--signature S]
//   kiln --version
#include <kiln/kiln.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tensor_input.h"

namespace {

using namespace kiln;

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kHelp =
    "kiln: work with saved kiln models\n\n"
    "usage: kiln <command> [options]\n\n"
    "commands:\n"
    "  show DIR                       signatures, node counts and variables\n"
    "  run DIR --input NAME=VALUE     run a signature (VALUE: JSON or a .npy file)\n"
    "  graph DIR --format F           the graph as pbtxt, dot or svg\n"
    "  export-tfjs DIR OUT            write a TensorFlow.js GraphModel\n\n"
    "`kiln <command> --help` describes each command; `kiln --version` prints the version.\n";

const std::map<std::string, const char*> kCommandHelp = {
    {"show",
     "usage: kiln show DIR\n\n"
     "Prints each signature of the saved model in DIR (inputs and outputs with dtypes and\n"
     "shapes), its node counts before and after optimization, and the saved variables.\n"},
    {"run",
     "usage: kiln run DIR [--signature S] --input NAME=VALUE ...\n\n"
     "Runs signature S (default: the only one, or serving_default) and prints its outputs.\n"
     "VALUE is JSON (a number or nested arrays, e.g. x=[[1,2],[3,4]]) converted to the\n"
     "input's dtype, or the path of a .npy file whose dtype must match.\n"},
    {"graph",
     "usage: kiln graph DIR --format pbtxt|dot|svg [--signature S] [--optimized] [-o FILE]\n\n"
     "Writes the signature's graph: GraphDef text (pbtxt), Graphviz DOT, or SVG drawn by\n"
     "Graphviz's `dot`. --optimized shows the graph after the optimizer passes (what runs).\n"
     "Without -o the result goes to standard output.\n"},
    {"export-tfjs",
     "usage: kiln export-tfjs DIR OUT [--signature S]\n\n"
     "Writes a TensorFlow.js GraphModel (model.json and a weight shard) to OUT. Variables are\n"
     "frozen into the weights. Graphs TensorFlow.js cannot run (64-bit dtypes, variable\n"
     "writes, kiln-only ops) are refused with the node that prevents it.\n"},
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  std::vector<std::string> inputs;
  bool optimized = false;
  bool help = false;
};

Args parse(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Usage(s + " needs a value");
      return argv[++i];
    };
    if (s == "--help" || s == "-h")
      a.help = true;
    else if (s == "--optimized")
      a.optimized = true;
    else if (s == "--input")
      a.inputs.push_back(value());
    else if (s == "--signature" || s == "--format" || s == "-o")
      a.options[s] = value();
    else if (s.rfind("--input=", 0) == 0)
      a.inputs.push_back(s.substr(8));
    else if (s.rfind("-", 0) == 0)
      throw Usage("unknown option " + s);
    else
      a.positional.push_back(s);
  }
  return a;
}

std::string pick_signature(const LoadedModel& m, const Args& a) {
  auto it = a.options.find("--signature");
  if (it != a.options.end()) return it->second;
  const auto names = m.signatures();
  return names.size() == 1 ? names[0] : "serving_default";
}

void need_positional(const Args& a, size_t n, const char* command) {
  if (a.positional.size() != n)
    throw Usage(std::string(command) + " takes " + std::to_string(n) + " path argument" + (n > 1 ? "s" : "") +
                "; see kiln " + command + " --help");
}

std::string spec_list(const std::vector<TensorSpec>& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i)
    out +=
        (i ? ", " : "") + specs[i].name + ": " + std::string(dtype_name(specs[i].dtype)) + " " + specs[i].shape.str();
  return out;
}

// A model kiln cannot serve: its signatures as declared, and the ops each one lacks.
int show_unservable(const std::string& dir, const UnimplementedError& why) {
  const SavedModelInfo info = inspect(dir);
  std::cout << "kiln cannot serve this SavedModel yet: " << why.what() << "\n\n";
  for (const auto& s : info.signatures) {
    std::cout << "signature '" << s.name << "': (" << spec_list(s.inputs) << ") -> (" << spec_list(s.outputs) << ")\n";
    if (s.missing_ops.empty()) std::cout << "  missing ops: none\n";
    for (const std::string& op : s.missing_ops) std::cout << "  missing op: " << op << "\n";
  }
  return 0;
}

int show(const Args& a) {
  need_positional(a, 1, "show");
  LoadedModel m;
  try {
    m = load(a.positional[0]);
  } catch (const UnimplementedError& e) {
    return show_unservable(a.positional[0], e);
  }
  for (const std::string& name : m.signatures()) {
    ConcreteFunction cf = m.signature(name);
    std::cout << "signature '" << name << "':\n" << cf.pretty_printed_signature();
    std::cout << "  Nodes: " << cf.graph().size() << " traced, " << cf.optimized_graph().size()
              << " after optimization\n\n";
  }
  const auto vars = m.variables();
  std::cout << "variables (" << vars.size() << "):\n";
  for (const auto& [name, v] : vars)
    std::cout << "  " << name << ": " << dtype_name(v.dtype()) << " " << v.shape().str() << "\n";
  return 0;
}

int run(const Args& a) {
  need_positional(a, 1, "run");
  LoadedModel m = load(a.positional[0]);
  const std::string sig = pick_signature(m, a);
  const auto specs = m.signature(sig).input_specs();
  std::map<std::string, Tensor> given;
  for (const std::string& in : a.inputs) {
    const size_t eq = in.find('=');
    if (eq == std::string::npos) throw Usage("--input needs NAME=VALUE, got " + in);
    const std::string name = in.substr(0, eq), value = in.substr(eq + 1);
    const TensorSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::string names;
      for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
      throw InvalidArgumentError("signature '" + sig + "' has no input '" + name + "' (inputs: " + names + ")");
    }
    const bool is_npy = value.size() > 4 && value.compare(value.size() - 4, 4, ".npy") == 0;
    given[name] = is_npy ? tools::tensor_from_npy(value) : tools::tensor_from_json(value, spec->dtype);
  }
  std::vector<Tensor> inputs;
  for (const auto& s : specs) {
    auto it = given.find(s.name);
    if (it == given.end()) throw Usage("missing --input " + s.name + "=VALUE");
    inputs.push_back(it->second);
  }
  const auto outputs = m.call(sig, inputs);
  const auto names = m.signature(sig).output_specs();  // the signature's output keys
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << (i < names.size() ? names[i].name : "output_" + std::to_string(i)) << ": " << outputs[i] << "\n";
  return 0;
}

int graph(const Args& a) {
  need_positional(a, 1, "graph");
  auto f = a.options.find("--format");
  if (f == a.options.end()) throw Usage("graph needs --format pbtxt|dot|svg");
  const std::string format = f->second;
  if (format != "pbtxt" && format != "dot" && format != "svg") throw Usage("unknown format '" + format + "'");
  LoadedModel m = load(a.positional[0]);
  ConcreteFunction cf = m.signature(pick_signature(m, a));
  const std::string out = a.options.count("-o") ? a.options.at("-o") : "";
  if (format == "svg") {
    const std::string cmd = "dot -Tsvg" + (out.empty() ? std::string() : " -o '" + out + "'");
    FILE* pipe = ::popen(cmd.c_str(), "w");
    if (!pipe) throw InternalError("cannot run Graphviz's dot (install graphviz)");
    const std::string dot = a.optimized ? cf.optimized_to_dot() : cf.to_dot();
    std::fwrite(dot.data(), 1, dot.size(), pipe);
    const int rc = ::pclose(pipe);
    if (rc != 0)
      throw InternalError("Graphviz's dot failed (exit status " + std::to_string(rc) + "); is graphviz installed?");
    return 0;
  }
  const std::string text = format == "dot" ? (a.optimized ? cf.optimized_to_dot() : cf.to_dot())
                                           : (a.optimized ? cf.optimized_graph_def() : cf.as_graph_def()).str();
  if (out.empty()) {
    std::cout << text;
  } else {
    std::ofstream file(out);
    if (!(file << text)) throw InternalError("cannot write " + out);
  }
  return 0;
}

int export_tfjs_command(const Args& a) {
  need_positional(a, 2, "export-tfjs");
  auto s = a.options.find("--signature");
  kiln::export_tfjs(a.positional[0], a.positional[1], s == a.options.end() ? "" : s->second);
  std::cout << "wrote " << a.positional[1] << "/model.json\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("kiln %s (cpu_isa %s, gemm %s)\n", kiln::version(), config::cpu_isa(), config::gemm_library());
    return 0;
  }
  const std::string command = argv[1];
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"show", show}, {"run", run}, {"graph", graph}, {"export-tfjs", export_tfjs_command}};
  auto it = commands.find(command);
  if (it == commands.end()) {
    std::fprintf(stderr, "kiln: unknown command '%s'\n\n%s", command.c_str(), kHelp);
    return 2;
  }
  try {
    const Args args = parse(argc, argv, 2);
    if (args.help) {
      std::fputs(kCommandHelp.at(command), stdout);
      return 0;
    }
    return it->second(args);
  } catch (const Usage& e) {
    std::fprintf(stderr, "kiln %s: %s\n\n%s", command.c_str(), e.what(), kCommandHelp.at(command));
    return 2;
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln %s: %s: %s\n", command.c_str(), kiln::error_code_name(e.code()), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln %s: %s\n", command.c_str(), e.what());
    return 1;
  }
}
