// RUN: not amp-opt %s --amp-lower-to-nvvm="chip=sm_100" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not amp-opt %s --amp-lower-to-nvvm="cubin-format=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT

// CHIP: amp-lower-to-nvvm: chip 'sm_100' is not one of sm_70 ... sm_90
// FORMAT: amp-lower-to-nvvm: cubin-format 'elf' is not one of fatbin, bin, isa
func.func @empty() {
  return
}
