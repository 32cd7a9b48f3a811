// A saved model's files in memory, for tests that load mutated copies (io::load_from_files).
#pragma once
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "graph.pb.h"
#include "io/saved_model.h"
#include "saved_model.pb.h"

namespace kiln::testing {

inline std::map<std::string, std::string> read_saved_files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const char* name : {io::kSavedModelFile, io::kVariablesIndexFile, io::kVariablesDataFile}) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    files[name] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

inline tensorflow::SavedModel saved_model_of(const std::map<std::string, std::string>& files) {
  tensorflow::SavedModel sm;
  sm.ParseFromString(files.at(io::kSavedModelFile));
  return sm;
}

// The meta graph's GraphDef (main graph and function library).
inline tensorflow::GraphDef saved_graph(const std::map<std::string, std::string>& files) {
  return saved_model_of(files).meta_graphs(0).graph_def();
}

// The files with the meta graph's GraphDef replaced.
inline std::map<std::string, std::string> with_graph(std::map<std::string, std::string> files,
                                                     const tensorflow::GraphDef& def) {
  tensorflow::SavedModel sm = saved_model_of(files);
  *sm.mutable_meta_graphs(0)->mutable_graph_def() = def;
  sm.SerializeToString(&files[io::kSavedModelFile]);
  return files;
}

}  // namespace kiln::testing
