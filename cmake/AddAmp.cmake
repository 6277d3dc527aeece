# Thin wrappers over MLIR's CMake helpers, so every project library is built
# the same way: static, outside libMLIR, linked against the MLIR dylib, and
# installed into the AmpMLIR CMake package (imported as AmpMLIR::<name>).

# Instrumented libraries need the sanitizer runtimes wherever they are
# linked, first among an executable's libraries, in projects using the
# installed package too.
function(amp_link_sanitizers name)
  if(AMP_SANITIZE)
    target_link_options(${name} INTERFACE -fsanitize=${AMP_SANITIZE})
  endif()
endfunction()

function(add_amp_library name)
  add_mlir_library(${name} ${ARGN} DISABLE_INSTALL EXCLUDE_FROM_LIBMLIR)
  target_link_libraries(${name} PUBLIC MLIR)
  amp_link_sanitizers(${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${AMP_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${AMP_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  install(TARGETS ${name} EXPORT AmpMLIRTargets
          ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()
