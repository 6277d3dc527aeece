/*===- CAPIIR.c - libAmpMLIRCAPIIR.so: MLIR's C API for the IR ------------===*\
|*                                                                            *|
|* No code of its own: the library is libMLIRCAPIIR.a linked whole (see      *|
|* CMakeLists.txt); CMake needs one source file to make a library.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
