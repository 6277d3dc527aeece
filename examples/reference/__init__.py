"""numpy references of the example training steps (forward, hand-written backward,
optimizer update), finite-difference checks, and an upstream-MLIR CPU harness."""
