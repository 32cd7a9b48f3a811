# R CMD check's entry point: the testthat suite against the installed package.
library(testthat)
library(kiln)
test_check("kiln")
