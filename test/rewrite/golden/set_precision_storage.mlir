"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x4xf32>, %arg1: tensor<?x2xi64>):
    %0 = "cagr.constant"() {elided, name = "w1"} : () -> tensor<3x4xf32>
    %1 = "cagr.constant"() {elided, name = "b1"} : () -> tensor<3xf32>
    %2 = "cagr.gemm"(%arg0, %0, %1) {name = "fc1", transB = 1 : i64, cagr.math = "bf16"} : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %3 = "cagr.relu"(%2) {name = "relu1"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %4 = "cagr.constant"() {elided, name = "emb", cagr.storage = "int8_rowwise"} : () -> tensor<5x3xf32>
    %5 = "cagr.embedding_bag"(%4, %arg1) {name = "bag", mode = "sum"} : (tensor<5x3xf32>, tensor<?x2xi64>) -> tensor<?x3xf32>
    %6 = "cagr.concat"(%3, %5) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x6xf32>
    %7 = "cagr.constant"() {elided, name = "w2"} : () -> tensor<6x1xf32>
    %8 = "cagr.matmul"(%6, %7) {name = "top"} : (tensor<?x6xf32>, tensor<6x1xf32>) -> tensor<?x1xf32>
    %9 = "cagr.sigmoid"(%8) {name = "prob"} : (tensor<?x1xf32>) -> tensor<?x1xf32>
    "cagr.return"(%9) : (tensor<?x1xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "ids"], input_dims = ["N,4", "N,2"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
