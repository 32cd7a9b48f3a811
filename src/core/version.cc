// kiln::version(): the version this library was built as (include/kiln/version.h).
#include "kiln/version.h"

namespace kiln {

const char* version() { return KILN_VERSION; }

}  // namespace kiln
