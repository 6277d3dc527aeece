// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-import-step

// expected-error@+1 {{argument #1 has no 'amp.import_role'; an imported step names the role of every argument}}
func.func @role_missing(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}, %x: tensor<2xf32>) {
  return
}

// -----

// expected-error@+1 {{has no argument of role 'seed': an imported step takes what its backward starts from}}
func.func @no_seed(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}) {
  return
}

// -----

// expected-error@+1 {{returns no new value of argument #0 'w'}}
func.func @no_new_value(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                        %seed: tensor<f32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"}) {
  return %seed : tensor<f32>
}

// -----

// expected-error@+1 {{returns 0 gradients for 1 parameters; an imported step returns one per parameter, in parameter order}}
func.func @no_gradient(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                       %seed: tensor<f32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}) {
  return %seed, %w : tensor<f32>, tensor<2xf32>
}

// -----

// expected-error@+1 {{result #1 is a new parameter value but no parameter argument is named 'v'}}
func.func @unknown_name(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                        %seed: tensor<f32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "v"}) {
  return %seed, %w : tensor<f32>, tensor<2xf32>
}

// -----

// expected-error@+1 {{the seed argument has type 'tensor<2xf32>' but the loss has type 'tensor<f32>'; the backward starts from d(loss)/d(loss)}}
func.func @seed_type(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                     %l: tensor<f32> {amp.import_role = "data"},
                     %seed: tensor<2xf32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "gradient", amp.name = "w"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}) {
  return %l, %seed, %w : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @seed_before_loss(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                            %seed: tensor<f32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "gradient", amp.name = "w"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}) {
  %e = tensor.empty() : tensor<2xf32>
  // expected-error@+1 {{reads the seed before the loss is computed; the backward must start after the loss}}
  %g = linalg.broadcast ins(%seed : tensor<f32>) outs(%e : tensor<2xf32>) dimensions = [0]
  %first = tensor.extract_slice %w[0] [1] [1] : tensor<2xf32> to tensor<1xf32>
  %loss = tensor.collapse_shape %first [] : tensor<1xf32> into tensor<f32>
  %w1 = arith.subf %w, %g : tensor<2xf32>
  return %loss, %g, %w1 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// An optimizer that reads a batch: not an update the pipeline can guard.
// expected-error@+1 {{the optimizer reads argument #1 'input0', which is neither a gradient, a state argument nor a hyperparameter}}
func.func @optimizer_reads_data(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                                %x: tensor<2xf32> {amp.import_role = "data", amp.name = "input0"},
                                %seed: tensor<f32> {amp.import_role = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "gradient", amp.name = "w"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"}) {
  %first = tensor.extract_slice %w[0] [1] [1] : tensor<2xf32> to tensor<1xf32>
  %loss = tensor.collapse_shape %first [] : tensor<1xf32> into tensor<f32>
  %e = tensor.empty() : tensor<2xf32>
  %g = linalg.broadcast ins(%seed : tensor<f32>) outs(%e : tensor<2xf32>) dimensions = [0]
  %d = arith.mulf %g, %x : tensor<2xf32>
  %w1 = arith.subf %w, %d : tensor<2xf32>
  return %loss, %g, %w1 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}
