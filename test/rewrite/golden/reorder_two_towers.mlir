"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x6xf32>, %arg1: tensor<3x6xf32>, %arg2: tensor<5x6xf32>):
    %0 = "cagr.gemm"(%arg0, %arg2) {name = "right_fc", transB = 1 : i64} : (tensor<?x6xf32>, tensor<5x6xf32>) -> tensor<?x5xf32>
    %1 = "cagr.sigmoid"(%0) {name = "right_gate"} : (tensor<?x5xf32>) -> tensor<?x5xf32>
    %2 = "cagr.mul"(%0, %1) {name = "right_act"} : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
    %3 = "cagr.gemm"(%arg0, %arg1) {name = "left_fc", transB = 1 : i64} : (tensor<?x6xf32>, tensor<3x6xf32>) -> tensor<?x3xf32>
    %4 = "cagr.relu"(%3) {name = "left_act"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %5 = "cagr.concat"(%4, %2) {name = "cat", axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    "cagr.return"(%5) : (tensor<?x8xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "wl", "wr"], input_dims = ["N,6", "3,6", "5,6"], output_names = ["y"], symbols = ["N"]} : () -> ()
}) : () -> ()
