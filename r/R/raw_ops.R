# tf$raw_ops: one R function per registry row, generated when the package loads (nothing
# here is written per op). Arguments are TensorFlow's raw-op names: inputs first, then attrs
# (NULL takes the row's default).
.rows <- new.env(hash = TRUE, parent = emptyenv())

.exec <- function(op, inputs, groups = NULL, attrs = list()) {
  .Call(kr_execute, .rows[[op]], inputs, groups, attrs)
}

.make_raw_op <- function(row) {
  op <- row[[1]]; inputs <- row[[2]]; number_attrs <- row[[3]]; attrs <- row[[4]]; index <- row[[8]]
  counted <- setdiff(number_attrs, "")
  attr_names <- setdiff(attrs, counted)  # a list input's length sets its number attr
  params <- c(inputs, attr_names, "name")
  formals_list <- rep(list(quote(expr = )), length(params))
  names(formals_list) <- params
  for (a in c(attr_names, "name")) formals_list[a] <- list(NULL)
  if (!length(counted)) {  # no list inputs: one static call, inputs and attrs by name
    inputs_call <- as.call(c(list(as.name("list")), lapply(inputs, as.name)))
    attrs_call <- as.call(c(list(as.name("list")), sapply(attrs, as.name, simplify = FALSE)))
    f <- function() NULL
    formals(f) <- formals_list
    body(f) <- bquote(.Call(kr_execute, .(index), .(inputs_call), NULL, .(attrs_call)))
    environment(f) <- asNamespace("kiln")
    return(f)
  }
  body <- substitute({
    env <- environment()
    ins <- list(); groups <- integer(0)
    for (k in seq_along(INPUTS)) {
      v <- env[[INPUTS[k]]]
      if (NUMBER[k] != "") {
        assign(NUMBER[k], length(v), envir = env)
        ins <- c(ins, as.list(v)); groups <- c(groups, rep(k, length(v)))
      } else {
        ins <- c(ins, list(v)); groups <- c(groups, k)
      }
    }
    at <- mget(ATTRS, envir = env)
    .Call(kr_execute, INDEX, ins, groups, at)
  }, list(INPUTS = inputs, NUMBER = number_attrs, ATTRS = attrs, INDEX = index))
  f <- function() NULL
  formals(f) <- formals_list
  body(f) <- body
  environment(f) <- asNamespace("kiln")
  f
}

.build_raw_ops <- function() {
  ops <- new.env(hash = TRUE, parent = emptyenv())
  for (row in .Call(kr_op_rows)) {
    assign(row[[1]], row[[8]], envir = .rows)
    # Made and byte-compiled on first use: a thousand rows, most of them never called.
    eval(bquote(delayedAssign(.(row[[1]]), compiler::cmpfun(.make_raw_op(.(row))), assign.env = ops)))
  }
  ops
}
