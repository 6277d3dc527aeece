// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-cpu-parallel-loops="threads=0"

// A thread count below 1 is refused, with both values.

// expected-error @+1 {{amp-cpu-parallel-loops: threads=0 grain=65536: both must be positive integers}}
module {
  func.func @f() {
    return
  }
}
