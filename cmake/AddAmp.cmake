# Thin wrappers over MLIR's CMake helpers, so every project library is built
# the same way: static, outside libMLIR, linked against the MLIR dylib.
function(add_amp_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL EXCLUDE_FROM_LIBMLIR)
  target_link_libraries(${name} PUBLIC MLIR)
endfunction()
