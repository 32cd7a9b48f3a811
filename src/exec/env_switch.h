// An executor feature's switch in the environment (KILN_BATCH_SPLIT, KILN_LOOP_ROWS): on
// unless set to 0, which turns the feature off for comparisons. Read once per process.
#pragma once
#include <cstdlib>
#include <cstring>

namespace kiln::exec {

inline bool switched_on(const char* name) {
  const char* v = std::getenv(name);
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace kiln::exec
