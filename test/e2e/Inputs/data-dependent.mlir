// The model of data-dependent-outputs.test: outputs whose extent depends on
// the data, none declared (shape inference leaves them dynamic).
func.func @main(%x: tensor<3x4xf32> {kiln.name = "x"}, %c: tensor<4xi1> {kiln.name = "c"})
    -> (tensor<2x?xi64> {kiln.name = "nonzero"}, tensor<3x?xf32> {kiln.name = "compressed"},
        tensor<?xf32> {kiln.name = "unique"}, tensor<?xi64> {kiln.name = "first"},
        tensor<12xi64> {kiln.name = "inverse"}, tensor<?xi64> {kiln.name = "counts"}) {
  %nz = kiln.non_zero(%x) : (tensor<3x4xf32>) -> tensor<2x?xi64>
  %cx = kiln.compress(%x, %c) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<4xi1>) -> tensor<3x?xf32>
  %y, %i, %inv, %n = kiln.unique(%x) : (tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)
  return %nz, %cx, %y, %i, %inv, %n : tensor<2x?xi64>, tensor<3x?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>
}
