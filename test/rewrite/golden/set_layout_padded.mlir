"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x13xf32>, %arg1: tensor<8x16xf32>):
    %0 = "cagr.constant"() {elided, name = "w1", cagr.layout = "padded"} : () -> tensor<8x13xf32>
    %1 = "cagr.constant"() {elided, name = "b1"} : () -> tensor<8xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64, cagr.math = "tf32"} : (tensor<?x13xf32>, tensor<8x13xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %3 = "cagr.relu"(%2) {name = "relu1"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %4 = "cagr.constant"() {elided, name = "w2"} : () -> tensor<8x16xf32>
    %5 = "cagr.matmul"(%3, %4) {name = "fc2", cagr.math = "tf32"} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %6 = "cagr.matmul"(%3, %arg1) {name = "mix"} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %7 = "cagr.add"(%5, %6) {name = "sum"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %8 = "cagr.sigmoid"(%7) {name = "prob"} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    "cagr.return"(%8) : (tensor<?x16xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "p"], input_dims = ["N,13", "8,16"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
