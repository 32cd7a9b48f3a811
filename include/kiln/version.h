// kiln's version: the one source of it. CMake's project version, the Python package's
// (pyproject.toml reads this file), `kiln --version` and kiln.__version__ all come from here.
#pragma once

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 2
#define KILN_VERSION_PATCH 0
#define KILN_VERSION "0.2.0"

namespace kiln {

// The version of the libkiln this process loaded (KILN_VERSION is the headers' own).
const char* version();

}  // namespace kiln
