# ctest's entry point (tests/CMakeLists.txt, r_testthat): the testthat suite against the
# package `make r` installed; fails on any failure and prints the counts CI reports.
library(testthat)
library(kiln)
results <- as.data.frame(test_dir("testthat", package = "kiln", load_package = "installed",
                                  reporter = "summary", stop_on_failure = TRUE))
cat(sprintf("testthat: %d tests, %d expectations passed, %d failed, %d skipped\n",
            nrow(results), sum(results$nb) - sum(results$failed) - sum(results$skipped),
            sum(results$failed), sum(results$skipped)))
