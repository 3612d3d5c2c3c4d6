"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32>):
    %0 = "cagr.gemm"(%arg0, %arg1) {name = "fc_a", transB = 1 : i64, cagr.stream = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %1 = "cagr.relu"(%0) {name = "act_a", cagr.stream = 1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %2 = "cagr.gemm"(%arg0, %arg2) {name = "fc_b", transB = 1 : i64} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %3 = "cagr.tanh"(%2) {name = "act_b"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %4 = "cagr.add"(%1, %3) {name = "join"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %5 = "cagr.sigmoid"(%4) {name = "prob"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%5) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "wa", "wb"], input_dims = ["N,8", "4,8", "4,8"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
