// kiln::distribute outside mpirun: without init(), and in a build without MPI, every call
// says what is missing. (The collectives themselves: tests/distribute, under mpirun.)
#include <kiln/distribute.h>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(DistributeApi, CallsBeforeInitOrWithoutMpiSaySo) {
  if (distribute::available()) {
    EXPECT_FALSE(distribute::is_initialized());
    expect_error<FailedPreconditionError>([] { distribute::rank(); }, "call init() first");
    expect_error<FailedPreconditionError>([] { distribute::allreduce(ones({2})); }, "call init() first");
  } else {
    expect_error<FailedPreconditionError>([] { distribute::init(); }, "kiln was built without MPI");
    expect_error<FailedPreconditionError>([] { distribute::size(); }, "built without MPI");
  }
  expect_error<InvalidArgumentError>([] { distribute::set_timeout_seconds(0); }, "the timeout must be positive");
  EXPECT_GT(distribute::timeout_seconds(), 0);
}
