# tf$Variable: mutable state, read and assigned eagerly or from inside a tf_function.
.variable <- function(initial_value, trainable = TRUE, name = NULL, dtype = NULL) {
  init <- if (is.null(dtype)) initial_value else as_tensor(initial_value, dtype)
  .Call(kr_variable, init, if (is.null(name)) "Variable" else name)
}
`$.kiln_variable` <- function(x, name) {
  switch(name,
    read_value = function() .Call(kr_variable_read, x),
    value = function() .Call(kr_variable_read, x),
    numpy = function() as.array(.Call(kr_variable_read, x)),
    assign = function(value) invisible(.Call(kr_variable_assign, x, value, "set")),
    assign_add = function(delta) invisible(.Call(kr_variable_assign, x, delta, "add")),
    assign_sub = function(delta) invisible(.Call(kr_variable_assign, x, delta, "sub")),
    dtype = .dtype(.info(.Call(kr_variable_read, x))[[1]]),
    shape = .shape_of(.info(.Call(kr_variable_read, x))[[2]]),
    name = paste0(.Call(kr_variable_name, x), ":0"),
    stop("AttributeError: 'Variable' has no attribute '", name, "'", call. = FALSE))
}
print.kiln_variable <- function(x, ...) {
  v <- .Call(kr_variable_read, x)
  i <- .info(v)
  cat("<tf.Variable '", x$name, "' shape=", .shape_text(i[[2]], TRUE), " dtype=", .dtype_names[i[[1]] + 1],
      ", numpy=", .Call(kr_tensor_text, v, -1L), ">\n", sep = "")
  invisible(x)
}
