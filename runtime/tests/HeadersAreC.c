/*===- HeadersAreC.c - The runtime's public headers compile as C -----------===*\
|*                                                                            *|
|* Compiled as strict C11 with every warning an error: the ABI of compiled    *|
|* steps is plain C, and its layout is what amp-compile emits (it checks the  *|
|* same offsets from C++).                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "amp/Runtime/AmpRuntime.h"
#include "amp/Runtime/AmpSession.h"
#include "amp/Runtime/AmpStepABI.h"
#include "amp/Runtime/MgpuWrappers.h"

#include <stddef.h>

_Static_assert(offsetof(AmpStepBuffer, initValue) == 16 &&
                   offsetof(AmpStepBuffer, role) == 24 &&
                   offsetof(AmpStepBuffer, initKind) == 40 &&
                   sizeof(AmpStepBuffer) == 48,
               "AmpStepBuffer is {ptr, ptr, f64, i32 x 5}");
_Static_assert(offsetof(AmpCompiledStep, buffers) == 8 &&
                   sizeof(AmpCompiledStep) == 24,
               "AmpCompiledStep is {i32, i32, ptr, ptr}");
