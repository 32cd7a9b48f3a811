# tf$saved_model: save a traced function as a TensorFlow SavedModel (TensorFlow, TF Serving
# and TF.js converters load it) and load one back, its signatures called by input name.
.saved_model_save <- function(obj, export_dir, signatures = NULL, options = NULL) {
  as_concrete <- function(f) {
    if (inherits(f, "kiln_concrete_function")) return(f)
    if (inherits(f, "kiln_function")) {
      if (is.null(attr(f, "input_signature")))
        stop("ValueError: a tf_function is saved with its input_signature: ",
             "tf_function(f, input_signature = list(tf$TensorSpec(...)))", call. = FALSE)
      return(f$get_concrete_function())
    }
    stop("ValueError: tf$saved_model$save takes a tf_function or a concrete function", call. = FALSE)
  }
  if (is.null(signatures)) signatures <- list(serving_default = obj)
  if (!is.list(signatures)) signatures <- list(serving_default = signatures)
  ptrs <- lapply(signatures, function(f) attr(as_concrete(f), "ptr"))
  invisible(.Call(kr_saved_model_save, path.expand(export_dir), ptrs))
}

.saved_model_load <- function(export_dir, tags = NULL, options = NULL) {
  ptr <- .Call(kr_saved_model_load, path.expand(export_dir))
  names <- .Call(kr_saved_model_signatures, ptr)
  sigs <- lapply(names, function(n) function(...) .Call(kr_saved_model_call, ptr, n, list(...)))
  names(sigs) <- names
  structure(list(signatures = sigs, .ptr = ptr), class = "kiln_saved_model")
}
print.kiln_saved_model <- function(x, ...) {
  cat("<SavedModel: signatures ", paste(names(x$signatures), collapse = ", "), ">\n", sep = "")
  invisible(x)
}
