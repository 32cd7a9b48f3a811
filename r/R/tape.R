# tf$GradientTape: with(tf$GradientTape() %as% tape, { ... }) records the ops of the block;
# tape$gradient(target, sources) differentiates them, as R tensorflow's tape does.
.gradient_tape <- function(persistent = FALSE, watch_accessed_variables = TRUE) {
  ptr <- .Call(kr_tape_new, persistent, watch_accessed_variables)
  tape <- new.env(parent = emptyenv())
  tape$watch <- function(tensor) {
    for (t in if (is.list(tensor)) tensor else list(tensor)) .Call(kr_tape_watch, ptr, t)
    invisible(NULL)
  }
  tape$gradient <- function(target, sources, output_gradients = NULL, unconnected_gradients = "none") {
    single <- !is.list(sources)
    flat <- if (single) list(sources) else sources
    g <- .Call(kr_tape_gradient, ptr, target, flat, output_gradients, tolower(as.character(unconnected_gradients)))
    if (single) g[[1]] else stats::setNames(g, names(sources))
  }
  tape$stop_recording <- function() structure(list(ptr = ptr), class = "kiln_tape_pause")
  tape$.ptr <- ptr
  class(tape) <- "kiln_gradient_tape"
  tape
}

#' `context %as% name`: R tensorflow's way to name what a with() block opens.
`%as%` <- function(context, name) {
  structure(list(context = context, name = as.character(substitute(name))), class = "kiln_as")
}

with.kiln_as <- function(data, expr, ...) {
  assign(data$name, data$context, envir = parent.frame())
  .with_context(data$context, substitute(expr), parent.frame())
}
with.kiln_gradient_tape <- function(data, expr, ...) .with_context(data, substitute(expr), parent.frame())
with.kiln_tape_pause <- function(data, expr, ...) {
  .Call(kr_tape_record, data$ptr, FALSE)
  on.exit(.Call(kr_tape_record, data$ptr, TRUE))
  eval(substitute(expr), parent.frame())
}

.with_context <- function(context, expr, env) {
  if (inherits(context, "kiln_gradient_tape")) {
    .Call(kr_tape_record, context$.ptr, TRUE)
    on.exit(.Call(kr_tape_record, context$.ptr, FALSE))
    return(invisible(eval(expr, env)))
  }
  if (inherits(context, "kiln_device")) return(invisible(eval(expr, env)))
  stop("with(): not a context kiln knows: ", class(context)[1])
}
print.kiln_gradient_tape <- function(x, ...) { cat("<tf.GradientTape>\n"); invisible(x) }
