// RUN: kiln-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline='builtin.module(func.func(kiln-gpu-form-kernels))'
// RUN: not kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(func.func(kiln-gpu-form-kernels{block-size=100}))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: block-size must be a multiple of 32 from 32 to 1024

// A buffer the memory plan did not place cannot live on the device.
func.func @unplanned(%n: index, %out: memref<4xf32>) {
  // expected-error @+1 {{allocates a buffer the memory plan does not place}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// A value computed on the device cannot be returned to the host.
func.func @returned(%in: memref<f32>) -> f32 {
  // expected-error @+1 {{computes a value the graph function returns}}
  %v = memref.load %in[] : memref<f32>
  return %v : f32
}

// -----

// A dynamically shaped allocation inside a kernel has no per-thread form.
func.func @dynamic_inside(%n: memref<index>, %out: memref<4xf32>) {
  %c = memref.load %n[] : memref<index>
  // expected-error @+1 {{of a dynamic shape inside a GPU kernel is not supported}}
  %a = memref.alloc(%c) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c0] : memref<?xf32>
  return
}
