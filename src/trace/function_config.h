// Process-wide settings of kiln::function that the trace layer reads; kiln::config's public
// functions (src/api) set them.
#pragma once
#include "kiln/function.h"

namespace kiln::detail {

// Every Function calls its C++ callable directly (tf.config.run_functions_eagerly).
void set_functions_run_eagerly(bool enabled);
bool functions_run_eagerly();
// The optimizer options of functions whose FunctionOptions do not set their own.
void set_default_optimizer_options(const OptimizerOptions& options);
OptimizerOptions default_optimizer_options();

}  // namespace kiln::detail
