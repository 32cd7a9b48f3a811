# tf_function(f): f traced into a graph once per argument signature (tensors by dtype and
# shape, R values by type and value, as R tensorflow's arguments reach TensorFlow), with R
# control flow on tensors converted (R AutoGraph, autograph.R). The cache and the tracing
# rules are kiln's C++ front-end layer's, shared with Python.
tf_function <- function(f, input_signature = NULL, autograph = TRUE, reduce_retracing = FALSE, ...) {
  if (!is.function(f)) stop("tf_function() takes a function")
  fg <- if (autograph) .autograph(f) else f
  formal_names <- names(formals(f))
  formal_names <- formal_names[formal_names != "..."]
  core <- .Call(kr_function_new, "fn", formal_names, reduce_retracing)
  signature <- input_signature
  wrapper <- function(...) {
    args <- list(...)
    nms <- formal_names
    if (!is.null(names(args)) || length(args) != length(formal_names)) {
      args <- .match_args(args, formal_names)
      nms <- names(args)
    }
    if (!is.null(signature)) args <- .apply_signature(args, signature)
    r <- .Call(kr_function_call, core, args, nms, fg)
    if (typeof(r) == "externalptr") return(r)
    if (is.symbol(r)) return(do.call(fg, args))  # run eagerly
    .rebuild(r[[2]], r[[1]])
  }
  if (is.null(signature) && !("..." %in% names(formals(f))) && length(formal_names))
    wrapper <- .fixed_wrapper(f, fg, core, formal_names)
  structure(wrapper, class = c("kiln_function", "function"), core = core, fg = fg, formal_names = formal_names,
            input_signature = input_signature)
}

# The wrapper of a function without `...`: f's own formals (R matches the arguments and fills
# defaults, natively), and a body that hands them to the cache as a list: no `...` to unpack,
# no names to match in R (a cached call is about 1.5 us faster). Defaults are evaluated in an
# environment whose parent is f's, as f would evaluate them.
.fixed_wrapper <- function(f, fg, core, formal_names) {
  w <- function() NULL
  formals(w) <- formals(f)
  args_call <- as.call(c(list(as.name("list")), lapply(formal_names, as.name)))
  body(w) <- bquote({
    .kiln_args <- .(args_call)
    .kiln_r <- .Call(.kiln_function_call, .kiln_core, .kiln_args, .kiln_names, .kiln_fg)
    if (typeof(.kiln_r) == "externalptr") .kiln_r else .finish_call(.kiln_r, .kiln_fg, .kiln_args)
  })
  env <- new.env(parent = environment(f))
  env$.kiln_function_call <- kr_function_call
  env$.kiln_core <- core
  env$.kiln_names <- formal_names
  env$.kiln_fg <- fg
  env$.finish_call <- .finish_call
  environment(w) <- env
  compiler::cmpfun(w)  # byte code now: R's JIT leaves closures made this way uncompiled
}
.finish_call <- function(r, fg, args) {
  if (is.symbol(r)) return(do.call(fg, args))  # run eagerly
  .rebuild(r[[2]], r[[1]])
}

# Arguments by position and name, in f's order (R's own matching, without evaluating anything).
.match_args <- function(args, formal_names) {
  n <- names(args)
  if (is.null(n) || all(n == "")) {
    if (length(args) > length(formal_names) && length(formal_names) > 0)
      stop("too many arguments: the function takes ", length(formal_names))
    names(args) <- if (length(formal_names)) formal_names[seq_along(args)] else paste0("arg", seq_along(args))
    return(args)
  }
  out <- list()
  named <- n[n != ""]
  unknown <- setdiff(named, formal_names)
  if (length(unknown)) stop("unused argument: ", unknown[1])
  free <- setdiff(formal_names, named)
  positional <- args[n == ""]
  for (k in seq_along(positional)) out[[free[k]]] <- positional[[k]]
  for (k in named) out[[k]] <- args[[k]]
  out[intersect(formal_names, names(out))]
}

.apply_signature <- function(args, signature) {
  for (k in seq_along(args)) if (!.is_tensor(args[[k]]) && inherits(signature[[k]], "kiln_tensor_spec"))
    args[[k]] <- .Call(kr_as_tensor, args[[k]], signature[[k]][[2]], TRUE)
  args
}

# Tensors in `x`, depth first, replaced by the placeholders (the C++ walk's order).
.fill <- function(x, ph, counter) {
  if (.is_tensor(x) || inherits(x, "kiln_tensor_spec")) {
    counter$i <- counter$i + 1L
    return(ph[[counter$i]])
  }
  if (is.list(x) && !is.object(x)) return(lapply(x, .fill, ph = ph, counter = counter))
  if (is.list(x) && inherits(x, "kiln_shape")) return(x)
  x
}

# The trace: f on placeholders; its result flattened to tensors and the skeleton that
# rebuilds it (NULL: one tensor).
.trace <- function(fg, args, ph) {
  counter <- new.env(); counter$i <- 0L
  traced_args <- lapply(args, .fill, ph = ph, counter = counter)
  out <- do.call(fg, traced_args)
  .flatten(out)
}

.flatten <- function(out) {
  if (is.null(out)) return(list(list(), structure(list(), class = "kiln_none")))
  if (!is.list(out) || is.object(out)) return(list(list(.result_tensor(out)), NULL))
  flat <- list()
  skeleton <- rapply(out, function(leaf) {
    flat[[length(flat) + 1L]] <<- .result_tensor(leaf)
    structure(length(flat), class = "kiln_leaf")
  }, how = "replace")
  list(flat, structure(list(skeleton), class = "kiln_structure"))
}
.result_tensor <- function(v) {
  if (inherits(v, "kiln_variable")) return(v$read_value())
  if (.is_tensor(v)) v else .Call(kr_as_tensor, v, NULL, TRUE)
}
.rebuild <- function(structure, flat) {
  if (is.null(structure)) return(flat[[1]])
  if (inherits(structure, "kiln_none")) return(invisible(NULL))
  rapply(structure[[1]], function(leaf) flat[[unclass(leaf)]], classes = "kiln_leaf", how = "replace")
}

`$.kiln_function` <- function(x, name) {
  core <- attr(x, "core")
  switch(name,
    get_concrete_function = function(...) {
      args <- .match_args(list(...), attr(x, "formal_names"))
      if (!length(args) && !is.null(attr(x, "input_signature"))) {
        args <- attr(x, "input_signature")
        names(args) <- attr(x, "formal_names")[seq_along(args)]
      }
      .concrete(.Call(kr_function_concrete, core, args, names(args), attr(x, "fg")))
    },
    pretty_printed_concrete_signatures = function(verbose = TRUE)
      sub("\n+$", "", .Call(kr_function_info, core, "signatures")),
    experimental_get_tracing_count = function() .Call(kr_function_info, core, "tracing_count"),
    trace_log = function() .Call(kr_function_info, core, "trace_log"),
    experimental_clear_cache = function() invisible(.Call(kr_function_info, core, "clear")),
    python_function = attr(x, "fg"),
    stop("AttributeError: 'Function' object has no attribute '", name, "'", call. = FALSE))
}
print.kiln_function <- function(x, ...) {
  cat("<kiln Function: ", .Call(kr_function_info, attr(x, "core"), "tracing_count"), " traces>\n", sep = "")
  invisible(x)
}

.concrete <- function(ptr) {
  f <- function(...) {
    out <- .Call(kr_concrete_call, ptr, list(...))
    if (length(out) == 1) out[[1]] else out
  }
  structure(f, class = c("kiln_concrete_function", "function"), ptr = ptr)
}
`$.kiln_concrete_function` <- function(x, name) {
  ptr <- attr(x, "ptr")
  switch(name,
    graph = list(as_graph_def = function() structure(.Call(kr_concrete_info, ptr, "graph_def"), class = "kiln_graph_def"),
                 optimized_graph_def = function()
                   structure(.Call(kr_concrete_info, ptr, "optimized_graph_def"), class = "kiln_graph_def")),
    pretty_printed_signature = function(verbose = TRUE) .Call(kr_concrete_info, ptr, "signature"),
    name = .Call(kr_concrete_info, ptr, "name"),
    stop("AttributeError: 'ConcreteFunction' object has no attribute '", name, "'", call. = FALSE))
}
print.kiln_concrete_function <- function(x, ...) {
  cat("ConcreteFunction ", .Call(kr_concrete_info, attr(x, "ptr"), "signature"), "\n", sep = "")
  invisible(x)
}
print.kiln_graph_def <- function(x, ...) { cat(unclass(x)); invisible(x) }
as.character.kiln_graph_def <- function(x, ...) unclass(x)
