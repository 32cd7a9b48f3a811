#include "kiln/cpu.h"

#include "core/cpu_isa.h"

namespace kiln::config {

const char* cpu_isa() { return cpu_isa_name(kiln::cpu_isa()); }
const char* cpu_isa_supported() { return cpu_isa_name(kiln::cpu_isa_supported()); }

}  // namespace kiln::config
