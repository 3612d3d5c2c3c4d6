"builtin.module"() ({
  "cagr.graph"() ({
  ^bb0(%arg0: tensor<?x8xf32>, %arg1: tensor<16x8xf32>, %arg2: tensor<16xf32>, %arg3: tensor<4x16xf32>, %arg4: tensor<4xf32>):
    %0 = "cagr.gemm"(%arg0, %arg1, %arg2) {name = "fc1", transB = 1 : i64, cagr.group = 0 : i64} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %1 = "cagr.relu"(%0) {name = "relu1", cagr.group = 0 : i64} : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %2 = "cagr.gemm"(%1, %arg3, %arg4) {name = "fc2", transB = 1 : i64, cagr.math = "tf32"} : (tensor<?x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %3 = "cagr.sigmoid"(%2) {name = "sig"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    "cagr.return"(%3) : (tensor<?x4xf32>) -> ()
  }) {sym_name = "main", input_names = ["x", "w1", "b1", "w2", "b2"], input_dims = ["N,8", "16,8", "16", "4,16", "4"], output_names = ["prob"], symbols = ["N"]} : () -> ()
}) : () -> ()
