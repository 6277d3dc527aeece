// RUN: amp-opt %s --split-input-file --verify-diagnostics

func.func @seed_on_integer(%loss: tensor<i32>) {
  // expected-error@+1 {{'amp.seed' op takes the loss, which must be a ranked tensor of floats, got 'tensor<i32>'}}
  %seed = amp.seed %loss : tensor<i32>
  return
}

// -----

func.func @seed_on_unranked(%loss: tensor<*xf32>) {
  // expected-error@+1 {{'amp.seed' op takes the loss, which must be a ranked tensor of floats, got 'tensor<*xf32>'}}
  %seed = amp.seed %loss : tensor<*xf32>
  return
}

// -----

func.func @seed_result_type(%loss: tensor<f32>) {
  // expected-error@+1 {{'amp.seed' op requires the same type for all operands and results}}
  %seed = "amp.seed"(%loss) : (tensor<f32>) -> tensor<f16>
  return
}

// -----

func.func @two_seeds(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-note@+1 {{the first 'amp.seed' is here}}
  %s0 = amp.seed %a : tensor<f32>
  // expected-error@+1 {{'amp.seed' op is a second loss seed in this function; a training step has at most one 'amp.seed'}}
  %s1 = amp.seed %b : tensor<f32>
  return
}

// -----

func.func @integer_gradient(%g: tensor<4xi32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op gradient #0 must be a ranked tensor of floats, got 'tensor<4xi32>'}}
  %new = amp.update grads(%g : tensor<4xi32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xi32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @scalar_gradient(%g: f32, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op gradient #0 must be a ranked tensor of floats, got 'f32'}}
  %new = amp.update grads(%g : f32) state(%w : tensor<4xf32>) {
  ^bb0(%g0: f32, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @state_not_tensor(%g: tensor<4xf32>, %w: memref<4xf32>) -> memref<4xf32> {
  // expected-error@+1 {{'amp.update' op state operand #0 must be a ranked tensor, got 'memref<4xf32>'}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : memref<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: memref<4xf32>):
    amp.yield %w0 : memref<4xf32>
  } : memref<4xf32>
  return %new : memref<4xf32>
}

// -----

func.func @result_count(%g: tensor<4xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'amp.update' op has 2 results but 1 state operands; it returns one new value per state operand}}
  %new:2 = "amp.update"(%g, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> ({
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    "amp.yield"(%w0) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @result_type(%g: tensor<4xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'amp.update' op result #0 has type 'tensor<4xf16>' but state operand #0 has type 'tensor<4xf32>'}}
  %new = "amp.update"(%g, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> ({
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    "amp.yield"(%w0) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @block_argument_count(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op region takes 1 arguments but expects 2: the 1 gradients, then the 1 state values, then the 0 inputs}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @block_arguments_state_first(%g: tensor<8xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op region argument #0 has type 'tensor<4xf32>' but gradient #0 has type 'tensor<8xf32>'; the arguments are the gradients, then the state, then the inputs}}
  %new = amp.update grads(%g : tensor<8xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%w0: tensor<4xf32>, %g0: tensor<8xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @block_argument_state_type(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op region argument #1 has type 'tensor<4xf16>' but state operand #0 has type 'tensor<4xf32>'}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf16>):
    amp.yield %g0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @yield_arity(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    // expected-error@+1 {{'amp.yield' op yields 2 values but the enclosing 'amp.update' has 1 state operands}}
    amp.yield %w0, %g0 : tensor<4xf32>, tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @yield_type(%g: tensor<4xf16>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf16>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf16>, %w0: tensor<4xf32>):
    // expected-error@+1 {{'amp.yield' op value #0 has type 'tensor<4xf16>' but state operand #0 has type 'tensor<4xf32>'}}
    amp.yield %g0 : tensor<4xf16>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @value_from_outside(%g: tensor<4xf32>, %w: tensor<4xf32>, %lr: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@+1 {{required by region isolation constraints}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    // expected-error@+1 {{'arith.mulf' op using value defined outside the region}}
    %step = arith.mulf %g0, %lr : tensor<4xf32>
    amp.yield %step : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @yield_outside_update(%w: tensor<4xf32>) {
  // expected-error@+1 {{'amp.yield' op expects parent op 'amp.update'}}
  amp.yield %w : tensor<4xf32>
}

// -----

func.func @bad_precision_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.addf' op 'amp.precision' must be "f32", "f16" or "bf16", got "fp16"}}
  %r = arith.addf %a, %a {amp.precision = "fp16"} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @precision_not_string(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.addf' op 'amp.precision' must be "f32", "f16" or "bf16", got 16 : i64}}
  %r = arith.addf %a, %a {amp.precision = 16} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @low_pin_in_update(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    // expected-error@+1 {{'arith.subf' op pins 'bf16' inside an 'amp.update' region, where master weights and optimizer state always stay f32}}
    %w1 = arith.subf %w0, %g0 {amp.precision = "bf16"} : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @f32_pin_in_update_is_fine(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    %w1 = arith.subf %w0, %g0 {amp.precision = "f32"} : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @low_pin_on_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{'arith.addf' op pins 'f16' but has f64 values, which the AMP passes never convert}}
  %r = arith.addf %a, %a {amp.precision = "f16"} : tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

func.func @low_pin_on_integers(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'arith.addi' op pins 'f16' but has no f32 value to convert (only integer or index values)}}
  %r = arith.addi %a, %a {amp.precision = "f16"} : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @unknown_op_attribute(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.addf' op has unknown amp dialect attribute 'amp.prec'; operations take only 'amp.precision' and, on 'amp.update', 'amp.data_parallel'}}
  %r = arith.addf %a, %a {amp.prec = "f16"} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'amp.init' on argument #0 must be "zeros", "ones", "glorot" or "normal:<std>" with std > 0, got "normal:-1"}}
func.func @bad_init(%p: tensor<4xf32> {amp.init = "normal:-1"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'amp.state' on argument #0 must be "scale", "growth_tracker", "hysteresis", got "found_inf"}}
func.func @found_inf_is_a_result(%s: tensor<i1> {amp.state = "found_inf"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'amp.state' on result #0 must be "scale", "growth_tracker", "hysteresis" or "found_inf", got "loss"}}
func.func @bad_state_result(%s: tensor<f32>) -> (tensor<f32> {amp.state = "loss"}) {
  return %s : tensor<f32>
}

// -----

// expected-error@+1 {{'func.func' op has amp dialect attribute 'amp.init' on result #0, which takes only 'amp.state', 'amp.name' or 'amp.import_role'}}
func.func @init_on_result(%s: tensor<f32>) -> (tensor<f32> {amp.init = "zeros"}) {
  return %s : tensor<f32>
}

// -----

// expected-error@+1 {{'func.func' op has amp dialect attribute 'amp.precision' on argument #0, which takes only 'amp.init', 'amp.state', 'amp.name', 'amp.value' or 'amp.import_role'}}
func.func @precision_on_argument(%s: tensor<f32> {amp.precision = "f16"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'amp.name' on argument #0 must be a non-empty string of letters, digits and '_.-:[]' that does not start with '.', got "fc1/weight"}}
func.func @name_with_separator(%p: tensor<4xf32> {amp.name = "fc1/weight"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'amp.name' on result #0 must be a non-empty string of letters, digits and '_.-:[]' that does not start with '.', got ""}}
func.func @empty_name(%p: tensor<4xf32>) -> (tensor<4xf32> {amp.name = ""}) {
  return %p : tensor<4xf32>
}

// -----

func.func @input_of_another_type(%w: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op region argument #1 has type 'tensor<f16>' but input #0 has type 'tensor<f32>'}}
  %n = amp.update state(%w : tensor<4xf32>) inputs(%lr : tensor<f32>) {
  ^bb0(%w0: tensor<4xf32>, %rate: tensor<f16>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'amp.value' on argument #0 must be a number, got "0.1"}}
func.func @value_as_text(%lr: tensor<f32> {amp.value = "0.1"}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op 'amp.import_role' on result #0 must be "loss", "gradient", "parameter", "optimizer_state" or "buffer", got "seed"}}
func.func @seed_result(%s: tensor<f32>) -> (tensor<f32> {amp.import_role = "seed"}) {
  return %s : tensor<f32>
}

// -----

func.func @data_parallel_on_another_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.addf' op 'amp.data_parallel' is "mpi" on an 'amp.update' (its gradients are sums over the ranks), got "mpi"}}
  %r = arith.addf %a, %a {amp.data_parallel = "mpi"} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @data_parallel_other_value(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op 'amp.data_parallel' is "mpi" on an 'amp.update' (its gradients are sums over the ranks), got "nccl"}}
  %n = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } {amp.data_parallel = "nccl"} : tensor<4xf32>
  return %n : tensor<4xf32>
}
