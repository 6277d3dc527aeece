// Steps that break the contract, one per function (select with --func).

func.func @no_seed(%w: tensor<4xf32>) -> tensor<4xf32> {
  %n = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %n : tensor<4xf32>
}

func.func @loss_not_returned(%w: tensor<4xf32>) -> tensor<4xf32> {
  %s = amp.seed %w : tensor<4xf32>
  %n = amp.update grads(%s : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %n : tensor<4xf32>
}

func.func @dynamic_batch(%w: tensor<4xf32>, %x: tensor<?x4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %s = amp.seed %w : tensor<4xf32>
  %n = amp.update grads(%s : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %w, %n : tensor<4xf32>, tensor<4xf32>
}
